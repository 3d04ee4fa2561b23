// The public API of @pkg/core, plus what an application needs of the four packages it is
// built on, so that one import is enough: the names users call and the interfaces they
// implement. Internal helpers stay in their modules (tests import those files directly).
// index.test.ts pins the runtime list: a new export is a deliberate change.

// @pkg/logger
export {
  AbstractLogger,
  LogLevel,
  Logger,
  NullLogger,
  currentLogContext,
  runWithLogContext,
} from '@pkg/logger';
export type {
  LogContext,
  LoggerInterface,
  LoggerOptions,
  LogLevelName,
  LogScope,
} from '@pkg/logger';

// @pkg/http
export {
  CorsConfig,
  HttpError,
  HttpHandler,
  MemoryRateLimitStore,
  RateLimiter,
  Request,
  Response,
} from '@pkg/http';
export type {
  CorsOptions,
  MemoryRateLimitStoreOptions,
  RateLimitResult,
  RateLimitRule,
  RateLimitStore,
  RequestInit,
  ResponseBody,
  TrustPredicate,
  TrustProxySetting,
} from '@pkg/http';

// @pkg/ws-protocol
export { WebSocketHandler, WsCloseCode, WsEventErrorCode } from '@pkg/ws-protocol';
export type {
  EventData,
  HandshakeContext,
  HandshakeHook,
  HandshakeRefusal,
  RequestId,
  WsClient,
} from '@pkg/ws-protocol';

// @pkg/decorators
export { HttpRoute, OnConnect, OnDisconnect, RateLimit, SocketOn } from '@pkg/decorators';
export type {
  EventAnswer,
  EventName,
  EventPayload,
  EventsMap,
  ListenedEvents,
  SocketEventsDeclaration,
  UntypedEvents,
  AnySchema,
  HttpHandlerResult,
  HttpInput,
  HttpRouteOptions,
  HttpSchemas,
  SchemaOutput,
  SocketOnOptions,
  HttpMethod,
  HttpMiddleware,
  HttpMiddlewareFn,
  HttpNext,
  MiddlewareClass,
  RouteOptions,
  WsContext,
  WsMiddleware,
  WsMiddlewareFn,
  WsNext,
} from '@pkg/decorators';

// @pkg/core
export type { EmitWithAckOptions } from './protocol/acks';
export { LocalAdapter } from './cluster/adapter';
export type {
  ClusterAnswer,
  ClusterQueryHandler,
  ClusterQueryOptions,
  ClusterQueryResult,
} from './cluster/cluster-query';
export type {
  ConnectionCursor,
  ConnectionInfo,
  ConnectionPage,
  ConnectionQuery,
  ConnectionRoom,
  ConnectionSort,
} from './protocol/connection-list';
export type { ConnectionStateName } from './protocol/connection';
export { createAccessCheck } from './observability/access-check';
export type { AccessCheckOptions } from './observability/access-check';
export type {
  Adapter,
  AdapterHost,
  AdapterState,
  BroadcastTarget,
  CountTarget,
  RemoteClientOperation,
} from './cluster/adapter';
export { MAX_KEPT_EXCEPT, fillTemplate, isBinaryTemplate } from './history/history';
export type {
  BinaryTemplate,
  MessageTemplate,
  HistoryPolicy,
  HistoryQuery,
  HistoryRead,
  HistoryStore,
  KeptMessage,
  KeptTarget,
  PositionTemplate,
  PublishedMessage,
} from './history/history';
export { MemoryHistoryStore } from './history/memory-history';
export type { MemoryHistoryStoreOptions } from './history/memory-history';
export type { HistoryOptions, KeepHistoryOptions, PublishedEvent } from './history/room-history';
export type {
  ApiDocumentOptions,
  JsonSchemaConverter,
  ServerEventDeclaration,
} from './docs/api-docs';
export type { ClientType } from './ws/client-registry';
export type { SerializedMessage } from './ws/serialized-message';
export { bytesSchema } from './routing/bytes-schema';
export type { BytesSchemaOptions } from './routing/bytes-schema';
export type {
  HttpRouteMatch,
  RegisteredHttpRoute,
  RegisteredSocketRoute,
  RouteHandler,
  SpecialEvent,
} from './routing/controller-registry';
export { CoreEventErrorCode, coreErrorCodes } from './errors';
export type { CoreError, CoreErrorCode, CoreErrorInfo, CoreEventErrorCodeValue } from './errors';
export type { HealthDocument, HealthStatus } from './lifecycle/health';
export type { ConnectOptions } from './testing/in-memory-client';
export type { InjectRequest, InjectResponse } from './testing/inject';
export { CLIENT_ID_ATTRIBUTE } from './lifecycle/lifecycle';
export { REQUEST_ID_ATTRIBUTE } from './observability/request-context';
export type { ServerState } from './lifecycle/lifecycle';
export { Middleware } from './routing/middleware';
export type { HttpTarget, RouteMiddlewareOptions, WsTarget } from './routing/middleware';
export { DEFAULT_NAMESPACE, NamespaceManager } from './ws/namespace-manager';
export type {
  ClientMembership,
  NamespaceManagerOptions,
  NamespaceStats,
} from './ws/namespace-manager';
export type {
  AuthContext,
  AuthExpiry,
  AuthHandler,
  AuthIdentity,
  AuthRefusal,
  AuthResult,
  AuthResume,
} from './protocol/protocol-v1';
export { RoomsController } from './routing/rooms-controller';
export type {
  RoomEventPayload,
  RoomGrant,
  RoomJoinPolicy,
  RoomsControllerOptions,
} from './routing/rooms-controller';
export type {
  EventDataOf,
  EventHandler,
  LifecycleHandler,
  OnOptions,
  RateLimitOption,
  HttpRouteHandler,
  RouteHandlerOptions,
} from './routing/programmatic';
export { Router } from './routing/router';
export type { RouterDependencies } from './routing/router';
export { Server } from './server';
export type { PresenceOptions, ServerLoad } from './server';
export { SERVER_CONFIG_DEFAULTS, ServerConfig } from './config/server-config';
export type {
  ResolvedServerConfig,
  ServerConfigOptions,
  ServerCorsOptions,
  ServerTlsOptions,
  UnknownEventPolicy,
  WsRateLimitKey,
  HistoryPattern,
} from './config/server-config';
// presence
export type { PresenceEntry, PresenceMeta, PresenceState, PresenceStats } from '@pkg/wire';
export type { PresencePattern } from './config/server-config';
export type { PresenceClientInfo, PresenceHook, PresenceJoin } from './presence/presence';
export type {
  PresenceRecord,
  PresenceReplicator,
  PresenceReplicatorOptions,
  PresenceSink,
} from './presence/cluster-presence';
export { SocketController } from './routing/socket-controller';
export type {
  BroadcastOptions,
  BroadcastTargetOptions,
  ClientCredentials,
  ControllerHost,
  JoinRoomOptions,
} from './routing/socket-controller';
