// The public API of @pkg/http: what users call and the interfaces they implement. Parsing
// helpers (request-target, query, Host, Forwarded, bodies, IP spelling) stay inside the
// package; tests import them from their module files.
export { HttpHandler } from './http-handler';
export { httpHandlerDefaults } from './options';
export type { HttpHandlerOptions, HttpDispatch } from './options';
export { Request } from './request';
export type { AttributeSource, RequestInit } from './request';
export type { PrototypeKeysPolicy } from './body';
export { Response } from './response';
export type { ResponseBody } from './response';
export { httpErrorBody } from './error-body';
export type { HttpErrorBody, HttpErrorFields } from './error-body';
export { CorsConfig } from './cors';
export type { CorsOptions } from './cors';
export { normalizeOriginEntry, serializeOrigin } from './origin';
export { compileTrustProxy } from './trust-proxy';
export type { TrustProxySetting, TrustPredicate } from './trust-proxy';
export { resolveClientAddress, resolveForwarded } from './forwarded';
export type { ForwardedInfo } from './forwarded';
export type { ParsedHost } from './host';
export { addressGroup } from './address-group';
export { RateLimiter, MemoryRateLimitStore } from './rate-limit';
export type {
  RateLimitRule,
  RateLimitResult,
  RateLimitStore,
  MemoryRateLimitStoreOptions,
} from './rate-limit';
export { httpErrorCodes, HttpError } from './errors';
export type { HttpErrorInfo, HttpErrorCode, CodedHttpError } from './errors';
