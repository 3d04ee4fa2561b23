export { httpErrorCodes, HttpError, createHttpError } from './errors';
export type { HttpErrorInfo, HttpErrorCode, CodedHttpError } from './errors';
export { compileTrustProxy, isCanonicalIp, normalizeIp } from './trust-proxy';
export type { TrustProxySetting, TrustPredicate } from './trust-proxy';
export {
  resolveClientAddress,
  resolveForwarded,
  parseForwardedHeader,
  forwardedForAddress,
} from './forwarded';
export type { ForwardedElement, ForwardedInfo } from './forwarded';
export { parseHost } from './host';
export type { ParsedHost } from './host';
export { parseRequestTarget, parseQueryString } from './target';
export type { RequestTarget } from './target';
export { parseBody, parseJsonSafely } from './body';
export { Request } from './request';
export type { RequestInit } from './request';
export { Response } from './response';
export type { ResponseBody } from './response';
export { CorsConfig, applyCorsHeaders, answerPreflight, isPreflightRequest } from './cors';
export type { CorsOptions } from './cors';
export { RateLimiter, MemoryRateLimitStore, validateRateLimitRule } from './rate-limit';
export type {
  RateLimitRule,
  RateLimitResult,
  RateLimitStore,
  MemoryRateLimitStoreOptions,
} from './rate-limit';
export { HttpHandler } from './http-handler';
export { httpHandlerDefaults } from './options';
export type { HttpHandlerOptions, HttpDispatch } from './options';
