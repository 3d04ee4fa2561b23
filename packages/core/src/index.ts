// The public API of @pkg/core, plus what an application needs of the four packages it is
// built on, so that one import is enough: the names users call and the interfaces they
// implement. Internal helpers stay in their modules (tests import those files directly).
// index.test.ts pins the runtime list: a new export is a deliberate change.

// @pkg/logger
export { AbstractLogger, LogLevel, Logger, NullLogger } from '@pkg/logger';
export type { LogContext, LoggerInterface, LoggerOptions, LogLevelName } from '@pkg/logger';

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
export type { EmitWithAckOptions } from './acks';
export { LocalAdapter } from './adapter';
export type {
  Adapter,
  AdapterHost,
  AdapterState,
  BroadcastTarget,
  CountTarget,
  RemoteClientOperation,
} from './adapter';
export type { ApiDocumentOptions, JsonSchemaConverter, ServerEventDeclaration } from './api-docs';
export type { ClientType } from './client-registry';
export type {
  HttpRouteMatch,
  RegisteredHttpRoute,
  RegisteredSocketRoute,
  RouteHandler,
  SpecialEvent,
} from './controller-registry';
export { CoreEventErrorCode, coreErrorCodes } from './errors';
export type { CoreError, CoreErrorCode, CoreErrorInfo, CoreEventErrorCodeValue } from './errors';
export type { HealthDocument, HealthStatus } from './health';
export type { ConnectOptions } from './in-memory-client';
export type { InjectRequest, InjectResponse } from './inject';
export { CLIENT_ID_ATTRIBUTE } from './lifecycle';
export type { ServerState } from './lifecycle';
export { Middleware } from './middleware';
export type { HttpTarget, RouteMiddlewareOptions, WsTarget } from './middleware';
export { DEFAULT_NAMESPACE, NamespaceManager } from './namespace-manager';
export type { ClientMembership, NamespaceStats } from './namespace-manager';
export type { AuthContext, AuthHandler, AuthRefusal, AuthResult } from './protocol-v1';
export { RoomsController } from './rooms-controller';
export type { RoomEventPayload, RoomJoinPolicy, RoomsControllerOptions } from './rooms-controller';
export type {
  EventDataOf,
  EventHandler,
  LifecycleHandler,
  OnOptions,
  RateLimitOption,
  HttpRouteHandler,
  RouteHandlerOptions,
} from './programmatic';
export { Router } from './router';
export type { RouterDependencies } from './router';
export { Server } from './server';
export type { ServerLoad } from './server';
export { SERVER_CONFIG_DEFAULTS, ServerConfig } from './server-config';
export type {
  ResolvedServerConfig,
  ServerConfigOptions,
  ServerCorsOptions,
  ServerTlsOptions,
  UnknownEventPolicy,
  WsRateLimitKey,
} from './server-config';
export { SocketController } from './socket-controller';
export type { BroadcastOptions, BroadcastTargetOptions, ControllerHost } from './socket-controller';
