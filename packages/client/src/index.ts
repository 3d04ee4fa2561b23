export { Client, CLOSE_LOST } from './client';
export type { ClientStatus } from './client';
export { CLIENT_DEFAULTS } from './options';
export type { ClientOptions, CredentialSource, NetworkEvents, TraceContext } from './options';
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
  HistoryEntry,
  HistoryOptions,
  HistoryResult,
  LifecycleEventName,
  LifecycleEvents,
  Listener,
  ListenName,
  MessageInfo,
  RecoveredInfo,
  RoomRef,
  ServerErrorData,
  StopCause,
  StopInfo,
} from './events';
// The wire names the client always exported; they are defined once, in @pkg/wire.
export {
  ControlEvent,
  MAX_ID_LENGTH,
  PROTOCOL_VERSION,
  isValidRequestId as isValidId,
} from '@pkg/wire';
export type {
  HistoryIncompleteReason,
  LostRange,
  RecoveryFailureReason,
  RequestId,
  RoomPosition,
  StreamPosition,
} from '@pkg/wire';
export { backoffDelay } from './backoff';
export { Presence } from './presence';
export type {
  PresenceEntryOf,
  PresenceEventName,
  PresenceEvents,
  PresenceListItem,
  PresenceMetaOf,
  PresenceMetaType,
} from './presence';
export type { PresenceMeta, PresenceStats } from '@pkg/wire';
export type { WebSocketConstructor, WebSocketLike } from './transport';
