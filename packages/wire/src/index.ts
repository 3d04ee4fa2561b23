// The public API of @pkg/wire: the wire format of docs/protocol.md, shared by both ends.
export { EVENT_NAME_PATTERN, MAX_ID_LENGTH } from './names';
export {
  isValidEventName,
  isValidRequestId,
  isValidServerRequestId,
  isWellFormedName,
} from './names';
export type { RequestId, ServerRequestId } from './names';
export { encodeKeyName, roomKey } from './room-key';
export {
  META_LIMITS,
  PROTOCOL_VERSION,
  SUBPROTOCOL,
  isEventData,
  isValidSeq,
  readEnvelopeMeta,
} from './envelope';
export type { Envelope, EnvelopeMeta, EventData } from './envelope';
export {
  CLIENT_CONTROL_EVENTS,
  ControlEvent,
  HEARTBEAT_LIMITS,
  MAX_AUTH_LENGTH,
  MAX_SESSION_LENGTH,
  readHello,
  readStreamPosition,
  readWelcome,
} from './control';
export type {
  ControlEventName,
  HeartbeatTiming,
  HelloData,
  NackCode,
  NackData,
  ReadHelloOptions,
  ReceivedWelcome,
  ResumeRefusalReason,
  WelcomeData,
} from './control';
export {
  CloseCode,
  MAX_CLOSE_REASON_BYTES,
  MAX_RESTART_DELAY_MS,
  MAX_RETRY_AFTER_MS,
  closeCodeInfo,
  closeCodes,
  fitCloseReason,
  isSendableCloseCode,
  reconnectsAfter,
  reconnectsAfterRefusal,
  restartDelay,
  restartReason,
  retryAfterDelay,
  utf8Length,
} from './close-codes';
export type { CloseCodeInfo, CloseCodeValue, CloseSession, RefusalRetry } from './close-codes';
export {
  appendRid,
  appendSeq,
  encodeAnswer,
  encodeEnvelope,
  encodeMembers,
  encodeRequest,
  fillPosition,
  positionTemplate,
  readPositionMember,
} from './codec';
export {
  BINARY_CONTROL_EVENTS,
  BINARY_LIMITS,
  BINARY_MAGIC,
  BINARY_VERSION,
  BinaryFlag,
  appendBinaryRid,
  appendBinarySeq,
  decodeBinaryFrame,
  encodeBinaryFrame,
  encodeBinaryHeader,
  isBinaryFrame,
} from './binary';
export type {
  BinaryDecodeResult,
  BinaryFrame,
  BinaryFrameErrorCode,
  BinaryFrameFault,
  BinaryFrameHead,
} from './binary';
export { WireErrorCode, encodeError, readErrorData, wireErrors } from './error-codes';
export type { ErrorData, ErrorEnvelope, WireErrorCodeValue, WireErrorInfo } from './error-codes';
export {
  REFRESH_LIMITS,
  readRefresh,
  readRefreshAnswer,
  readRevoked,
  refreshDelay,
} from './refresh';
export type { RefreshAnswerData, RefreshData, RevokedData, RevokedReason } from './refresh';
export { HISTORY_LIMITS } from './history';
export { readHistoryAnswer, readRecovered, readRoomPosition } from './history-read';
export type {
  EnvelopePosition,
  HistoryAnswerData,
  HistoryIncompleteReason,
  HistoryMessage,
  HistoryRequestData,
  LostRange,
  RecoveredData,
  RecoveryFailureReason,
  RoomPosition,
  StreamPosition,
} from './history';
export {
  readPresenceData,
  readPresenceDiff,
  readPresenceMeta,
  readPresenceState,
  readPresenceStats,
} from './presence-read';
export type {
  PresenceDiffData,
  PresenceEntry,
  PresenceMeta,
  PresenceState,
  PresenceStateData,
  PresenceStats,
} from './presence';
