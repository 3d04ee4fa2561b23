export { generateAcceptKey } from './accept-key';
export { createClientIdGenerator } from './client-id';
export type { ClientIdGenerator } from './client-id';
export { WsCloseCode } from './close-codes';
export type { WsClient } from './connection';
export { decodeMessage, MessageDecodeError, prepareMessage } from './envelope';
export type { Envelope, EventData, MessageDecodeErrorCode } from './envelope';
export { createWsError, wsErrorCodes, WsEventErrorCode } from './errors';
export type { WsError, WsErrorCode, WsErrorInfo, WsEventErrorCodeValue } from './errors';
export type { HandshakeContext, HandshakeHook, HandshakeRefusal } from './handshake';
export { wsHandlerDefaults } from './options';
export type { WebSocketHandlerOptions } from './options';
export { WebSocketHandler } from './websocket-handler';
export type {
  WsConnectListener,
  WsDisconnectListener,
  WsMessageListener,
} from './websocket-handler';
