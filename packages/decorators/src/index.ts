// Importing this package defines Symbol.metadata where the runtime lacks it (see store.ts),
// which is why package.json lists the entry files under "sideEffects".
export { decErrorCodes } from './errors';
export type { DecError, DecErrorCode } from './errors';
export { SocketOn, OnConnect, OnDisconnect } from './socket';
export { HttpRoute } from './http-route';
export type { HttpHandlerResult } from './http-route';
export { RateLimit } from './rate-limit';
export { getControllerMetadata } from './reader';
export type {
  EventAnswer,
  EventName,
  EventPayload,
  EventsMap,
  ListenedEvents,
  SocketEventsDeclaration,
  UntypedEvents,
} from './event-map';
export type {
  AnySchema,
  ControllerMetadata,
  HttpInput,
  HttpRouteOptions,
  HttpSchemas,
  SchemaOutput,
  SocketOnOptions,
  HttpMethod,
  HttpMiddleware,
  HttpMiddlewareFn,
  HttpNext,
  HttpRouteMetadata,
  MiddlewareClass,
  RouteOptions,
  EventData,
  SocketRouteMetadata,
  WsContext,
  WsMiddleware,
  WsMiddlewareFn,
  WsNext,
} from './types';
