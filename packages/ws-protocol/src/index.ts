// The public API of @pkg/ws-protocol: what users call and the interfaces they implement.
// Frame-level helpers (accept key, message decoding, error factory) stay inside the package;
// tests import them from their module files.
export { WebSocketHandler } from './websocket-handler';
export type {
  WsConnectListener,
  WsDisconnectListener,
  WsInboundListener,
  WsMessageListener,
} from './websocket-handler';
export { wsHandlerDefaults } from './options';
export type { WebSocketHandlerOptions } from './options';
export type { WsClient } from './connection';
export type { HandshakeContext, HandshakeHook, HandshakeRefusal } from './handshake';
export { prepareMessage, prepareAnswer, isValidRequestId, MessageDecodeError } from './envelope';
export type {
  BinaryEnvelope,
  Envelope,
  EventData,
  MessageDecodeErrorCode,
  RequestId,
} from './envelope';
export { PROTOCOL_V1_SUBPROTOCOL } from './subprotocol';
export { createClientIdGenerator } from './client-id';
export { guardLogger } from './guard-logger';
export type { ClientIdGenerator } from './client-id';
export { WsCloseCode } from './close-codes';
export { wsErrorCodes, WsEventErrorCode } from './errors';
export type { WsError, WsErrorCode, WsErrorInfo, WsEventErrorCodeValue } from './errors';
