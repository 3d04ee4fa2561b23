import type { AnySchema, HttpSchemas } from '@pkg/decorators';
import { Response, type Request } from '@pkg/http';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { isThenable } from './middleware';

// Input validation with Standard Schemas (zod, valibot, arktype...): the library depends on
// none of them, only on the `~standard.validate` contract. Routes without a schema pay
// nothing: the dispatchers wrap a handler only when its route declares one.

/** One problem found in the input, as sent to the client. */
export interface ValidationIssue {
  /** Where in the input: keys and indexes from the root (for HTTP, the first is the part: `body`, `query`, `params`, `headers`). */
  readonly path: (string | number)[];
  readonly message: string;
}

/** At most this many issues are sent; a schema may report many more for a large input. */
export const MAX_ISSUES = 20;
/** Longest issue message sent, in characters (messages may quote the input). */
export const MAX_ISSUE_MESSAGE = 200;
/** Deepest issue path sent, in segments. */
export const MAX_ISSUE_PATH = 16;
/** Longest path segment sent, in characters (object keys come from the input). */
export const MAX_PATH_SEGMENT = 64;

/** The answer of a validation: the schema's output, or the bounded issues. */
export type ValidationResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly issues: ValidationIssue[] };

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}\u2026`;
}

function segmentOf(segment: PropertyKey | StandardSchemaV1.PathSegment): string | number {
  const key =
    typeof segment === 'object' && segment !== null
      ? (segment as { key: PropertyKey }).key
      : segment;
  if (typeof key === 'number') return key;
  return clip(typeof key === 'symbol' ? key.toString() : String(key), MAX_PATH_SEGMENT);
}

/** The schema's issues, bounded in count, path depth and text length; `prefix` goes first in every path. */
export function boundIssues(
  issues: readonly StandardSchemaV1.Issue[],
  prefix?: string,
): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of issues.slice(0, MAX_ISSUES)) {
    const path = (issue.path ?? []).slice(0, MAX_ISSUE_PATH).map(segmentOf);
    if (prefix !== undefined) path.unshift(prefix);
    const message = typeof issue.message === 'string' ? issue.message : 'Invalid value';
    out.push({ path, message: clip(message, MAX_ISSUE_MESSAGE) });
  }
  return out;
}

function resultOf(result: StandardSchemaV1.Result<unknown>, prefix?: string): ValidationResult {
  if (result.issues === undefined) return { ok: true, value: result.value };
  const issues = boundIssues(result.issues, prefix);
  if (issues.length === 0) issues.push({ path: prefix ? [prefix] : [], message: 'Invalid value' });
  return { ok: false, issues };
}

/** Validates `value`; synchronous when the schema is. */
export function validate(
  schema: AnySchema,
  value: unknown,
  prefix?: string,
): ValidationResult | Promise<ValidationResult> {
  const result = schema['~standard'].validate(value);
  if (isThenable(result)) {
    return Promise.resolve(result).then((settled) => resultOf(settled, prefix));
  }
  return resultOf(result, prefix);
}

/** `validation_failed` message text (the issues travel beside it). */
export function validationMessage(issues: readonly ValidationIssue[], where: string): string {
  const first = issues[0];
  const at = first && first.path.length > 0 ? ` at ${first.path.join('.')}` : '';
  return `${where} is invalid${at}: ${first?.message ?? 'Invalid value'}`;
}

/** The 400 answer of an HTTP request whose input failed its schemas. */
export function validationFailedResponse(issues: ValidationIssue[]): Response {
  return Response.error(400, { code: 'validation_failed', details: { issues } });
}

/** The parts of a request the HTTP schemas check, in this order. */
const HTTP_PARTS = ['params', 'query', 'headers', 'body'] as const;

function partOf(request: Request, part: (typeof HTTP_PARTS)[number]): unknown {
  switch (part) {
    case 'params':
      return request.getParams();
    case 'query':
      return request.getQuery();
    case 'headers':
      return request.getHeaders();
    default:
      return request.getBody();
  }
}

/**
 * The handler's second argument `{ params, query, headers, body }`: each part read from the
 * request on first access (the body is parsed lazily), unless a schema replaced it.
 */
class RequestInput {
  readonly #request: Request;
  constructor(request: Request) {
    this.#request = request;
  }
  get params(): unknown {
    return this.#request.getParams();
  }
  get query(): unknown {
    return this.#request.getQuery();
  }
  get headers(): unknown {
    return this.#request.getHeaders();
  }
  get body(): unknown {
    return this.#request.getBody();
  }
}

/** The input of a route without schemas: the request's own values, read on access. */
export function rawHttpInput(request: Request): object {
  return new RequestInput(request);
}

/** The result of {@link validateHttpInput}. */
export type HttpInputResult =
  | { readonly ok: true; readonly input: object }
  | { readonly ok: false; readonly issues: ValidationIssue[] };

/**
 * Validates the parts of `request` that `schemas` names; the other parts stay as the
 * request has them. Every part is checked, so one answer lists all the problems.
 */
export function validateHttpInput(
  schemas: HttpSchemas,
  request: Request,
): HttpInputResult | Promise<HttpInputResult> {
  const pending: Array<ValidationResult | Promise<ValidationResult>> = [];
  const parts: Array<(typeof HTTP_PARTS)[number]> = [];
  for (const part of HTTP_PARTS) {
    const schema = schemas[part];
    if (schema === undefined) continue;
    parts.push(part);
    pending.push(validate(schema, partOf(request, part), part));
  }
  const settle = (results: ValidationResult[]): HttpInputResult => {
    const issues: ValidationIssue[] = [];
    const input = new RequestInput(request);
    results.forEach((result, i) => {
      if (result.ok) {
        Object.defineProperty(input, parts[i]!, { value: result.value, enumerable: true });
      } else issues.push(...result.issues);
    });
    return issues.length === 0
      ? { ok: true, input }
      : { ok: false, issues: issues.slice(0, MAX_ISSUES) };
  };
  if (pending.some(isThenable)) return Promise.all(pending).then(settle);
  return settle(pending as ValidationResult[]);
}

/**
 * Wraps the call of a `SocketOn` handler: without a schema, `call` gets the envelope's
 * data; with one, the schema's output, or `invalid` runs with the issues instead.
 */
export function validatedWsCall<C extends { readonly data: unknown }>(
  schema: AnySchema | undefined,
  call: (context: C, data: unknown) => unknown,
  invalid: (context: C, issues: ValidationIssue[]) => void,
): (context: C) => unknown {
  if (schema === undefined) return (context) => call(context, context.data);
  const settle = (context: C, result: ValidationResult): unknown => {
    if (result.ok) return call(context, result.value);
    invalid(context, result.issues);
    return undefined;
  };
  return (context) => {
    const result = validate(schema, context.data);
    return isThenable(result) ? result.then((r) => settle(context, r)) : settle(context, result);
  };
}
