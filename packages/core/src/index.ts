// The public API of @pkg/core, plus the public API of the four packages it is built on, so
// that an application needs one import. Names are unique across the five packages.
export * from '@pkg/logger';
export * from '@pkg/http';
export * from '@pkg/ws-protocol';
export * from '@pkg/decorators';

export { coreErrorCodes, createCoreError, CoreEventErrorCode } from './errors';
export type { CoreError, CoreErrorCode, CoreErrorInfo, CoreEventErrorCodeValue } from './errors';
export { SERVER_CONFIG_DEFAULTS, ServerConfig } from './server-config';
export type {
  ResolvedServerConfig,
  ServerConfigOptions,
  ServerCorsOptions,
  ServerTlsOptions,
  UnknownEventPolicy,
} from './server-config';
export { DEFAULT_NAMESPACE, NamespaceManager } from './namespace-manager';
export type { ClientMembership, NamespaceStats } from './namespace-manager';
export { LocalAdapter } from './adapter';
export type { Adapter, AdapterHost, BroadcastTarget, CountTarget } from './adapter';
export { Middleware, SocketContext } from './middleware';
export type { HttpTarget, RouteMiddlewareOptions, WsTarget } from './middleware';
export { Router, allowHeader } from './router';
export type {
  HttpRouteMatch,
  RegisteredHttpRoute,
  RegisteredSocketRoute,
  RouteHandler,
  RouterHost,
  SpecialEvent,
} from './router';
export { RouteTable, extractPathParameters, parseRoutePath, splitRequestPath } from './route-table';
export type { PathSegment, RouteTableMatch } from './route-table';
export { SocketController } from './socket-controller';
export { RoomsController } from './rooms-controller';
export type { RoomEventPayload, RoomJoinPolicy, RoomsControllerOptions } from './rooms-controller';
export { buildHealthDocument, formatUptime } from './health';
export type { HealthDocument, HealthStatus } from './health';
export { CLIENT_ID_ATTRIBUTE, Server } from './server';
export type { BroadcastOptions, ClientType, ServerState } from './server';
