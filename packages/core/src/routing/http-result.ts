import { Buffer } from 'node:buffer';
import type { HttpSchemas } from '@pkg/decorators';
import { Response, type Request } from '@pkg/http';
import { createCoreError } from '../errors';
import { describeValue, isThenable } from './middleware';
import {
  rawHttpInput,
  validateHttpInput,
  validationFailedResponse,
  type HttpInputResult,
  type ValidationIssue,
} from './validation';

// What an HTTP handler may return, turned into the one `Response` the rest of the chain
// (middleware, rate-limit headers, CORS, HttpHandler) works with.

/** A WHATWG `Response` (the global one of Node 18+), recognised without `instanceof` across realms. */
function isWebResponse(value: object): value is globalThis.Response {
  const WebResponse = (globalThis as { Response?: unknown }).Response;
  if (typeof WebResponse === 'function' && value instanceof WebResponse) return true;
  return (
    Object.prototype.toString.call(value) === '[object Response]' &&
    typeof (value as { arrayBuffer?: unknown }).arrayBuffer === 'function' &&
    typeof (value as { status?: unknown }).status === 'number'
  );
}

function isPlainJson(value: object): boolean {
  if (Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

async function fromWebResponse(web: globalThis.Response): Promise<Response> {
  const body = Buffer.from(await web.arrayBuffer());
  const response = new Response(body.length > 0 ? body : null, web.status);
  web.headers.forEach((value, name) => {
    if (name === 'set-cookie') return;
    response.setHeader(name, value);
  });
  // Several Set-Cookie headers are folded by Headers.forEach; getSetCookie keeps them apart.
  const cookies = (web.headers as { getSetCookie?: () => string[] }).getSetCookie?.() ?? [];
  for (const cookie of cookies) response.appendHeader('Set-Cookie', cookie);
  return response;
}

function unsupported(value: unknown): Error {
  return createCoreError(
    TypeError,
    'PKG_ERR_CORE_INVALID_RESPONSE',
    `the route handler resolved to ${describeValue(value)}, which cannot be sent: return a Response ` +
      '(for example Response.json(...)), a WHATWG Response, a plain object or array (sent as 200 JSON), ' +
      'or nothing (204 No Content).',
  );
}

function settle(value: unknown): Response | Promise<Response> {
  if (value instanceof Response) return value;
  if (value === undefined) return new Response(null, 204);
  if (typeof value === 'object' && value !== null) {
    if (isWebResponse(value)) return fromWebResponse(value);
    if (isPlainJson(value)) return Response.json(value);
  }
  throw unsupported(value);
}

/**
 * The `Response` for what a handler returned: a `Response` as it is, a WHATWG `Response`
 * converted (status, headers, body), a plain object or array as 200 JSON, `undefined` as
 * 204. Anything else throws `PKG_ERR_CORE_INVALID_RESPONSE` (HttpHandler answers 500).
 * Synchronous unless the handler returned a promise or a WHATWG `Response`.
 */
export function toResponse(value: unknown): Response | Promise<Response> {
  if (value instanceof Response) return value;
  if (isThenable(value)) return Promise.resolve(value).then(settle);
  return settle(value);
}

/**
 * The end of a route's HTTP chain: validates the parts of the request the route has
 * schemas for (a failure is answered 400 `validation_failed`, after `invalid` saw the
 * issues), calls `handler(request, input)` and turns its result into a `Response`.
 */
export function httpTarget(
  schemas: HttpSchemas | undefined,
  handler: (request: Request, input: object) => unknown,
  invalid: (request: Request, issues: ValidationIssue[]) => void,
): (request: Request) => Response | Promise<Response> {
  if (schemas === undefined) {
    return (request) => toResponse(handler(request, rawHttpInput(request)));
  }
  const settle = (request: Request, result: HttpInputResult): Response | Promise<Response> => {
    if (result.ok) return toResponse(handler(request, result.input));
    invalid(request, result.issues);
    return validationFailedResponse(result.issues);
  };
  return (request) => {
    const result = validateHttpInput(schemas, request);
    return isThenable(result) ? result.then((r) => settle(request, r)) : settle(request, result);
  };
}
