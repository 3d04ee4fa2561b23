export { Client, CLOSE_LOST } from './client';
export type { ClientStatus } from './client';
export { CLIENT_DEFAULTS } from './options';
export type { ClientOptions, CredentialSource, NetworkEvents } from './options';
export { ClientError, clientErrorCodes } from './errors';
export type { ClientErrorCode, ClientErrorDetails, ClientErrorInfo } from './errors';
export type {
  AckOptions,
  ConnectInfo,
  DefaultEvents,
  DisconnectInfo,
  EventAnswer,
  EventData,
  EventName,
  EventsMap,
  LifecycleEventName,
  LifecycleEvents,
  Listener,
  ListenName,
  RoomRef,
  ServerErrorData,
} from './events';
export { ControlEvent, MAX_ID_LENGTH, PROTOCOL_VERSION, isValidId } from './protocol';
export type { RequestId } from './protocol';
export { backoffDelay } from './backoff';
export type { WebSocketConstructor, WebSocketLike } from './transport';
