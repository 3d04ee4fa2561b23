/**
 * Turns arbitrary context values into JSON that never throws: circular references become
 * "[Circular]", BigInt becomes a decimal string, errors become plain records (class, message,
 * stack, cause), and anything that cannot be read becomes a short marker instead of an
 * exception in the caller.
 */
import { types } from 'node:util';

/** How deep nested objects are followed before they are written as "[Object]" / "[Array]". */
export const MAX_DEPTH = 10;
/** How many links of an error's `cause` chain are recorded below the error itself. */
export const MAX_CAUSE_DEPTH = 5;

/** The JSON record written for an error (see {@link serializeError}). */
export interface SerializedError {
  class: string;
  message: string;
  stack?: string;
  code?: unknown;
  cause?: unknown;
  errors?: unknown[];
  [key: string]: unknown;
}

function describeError(err: unknown): string {
  return isError(err) ? safeString(err.message) : safeString(err);
}

/** True for errors, including those from another realm (vm contexts, workers). */
export function isError(value: unknown): value is Error {
  return value instanceof Error || types.isNativeError(value);
}

/** The class name of an error: its constructor's name, else its `name`, else "Error". */
export function errorClass(error: Error): string {
  try {
    const ctorName = (error.constructor as { name?: unknown } | undefined)?.name;
    if (typeof ctorName === 'string' && ctorName !== '' && ctorName !== 'Object') return ctorName;
    return typeof error.name === 'string' && error.name !== '' ? error.name : 'Error';
  } catch {
    return 'Error';
  }
}

class Normalizer {
  constructor(private readonly ancestors: object[] = []) {}

  value(input: unknown, depth: number): unknown {
    switch (typeof input) {
      case 'string':
      case 'boolean':
        return input;
      case 'number':
        return Number.isFinite(input) ? input : String(input);
      case 'bigint':
        return input.toString();
      case 'undefined':
        return undefined;
      case 'symbol':
        return input.toString();
      case 'function':
        return `[Function${input.name ? `: ${input.name}` : ''}]`;
      default:
        break;
    }
    if (input === null) return null;
    const obj = input as object;
    if (this.ancestors.includes(obj)) return '[Circular]';
    try {
      if (isError(obj)) return this.error(obj, depth, 0);
      if (depth >= MAX_DEPTH) return Array.isArray(obj) ? '[Array]' : '[Object]';
      this.ancestors.push(obj);
      try {
        return this.object(obj, depth);
      } finally {
        this.ancestors.pop();
      }
    } catch (err) {
      return `[Unserializable: ${describeError(err)}]`;
    }
  }

  private object(obj: object, depth: number): unknown {
    if (obj instanceof Date) {
      return Number.isNaN(obj.getTime()) ? 'Invalid Date' : obj.toISOString();
    }
    if (ArrayBuffer.isView(obj)) {
      return `[${obj.constructor.name} ${obj.byteLength} bytes]`;
    }
    if (obj instanceof Map) {
      const out: Record<string, unknown> = {};
      for (const [key, val] of obj) out[String(key)] = this.value(val, depth + 1);
      return out;
    }
    if (obj instanceof Set) {
      return Array.from(obj, (val) => this.value(val, depth + 1) ?? null);
    }
    if (Array.isArray(obj)) {
      return obj.map((val: unknown) => this.value(val, depth + 1) ?? null);
    }
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      const replaced: unknown = toJSON.call(obj);
      return replaced === obj ? this.properties(obj, depth) : this.value(replaced, depth + 1);
    }
    return this.properties(obj, depth);
  }

  private properties(
    obj: object,
    depth: number,
    skip?: ReadonlySet<string>,
  ): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(obj)) {
      if (skip?.has(key)) continue;
      let val: unknown;
      try {
        val = (obj as Record<string, unknown>)[key];
      } catch (err) {
        val = `[Unreadable: ${describeError(err)}]`;
      }
      const normalized = this.value(val, depth + 1);
      if (normalized !== undefined) out[key] = normalized;
    }
    return out;
  }

  error(error: Error, depth: number, causeDepth: number): SerializedError | string {
    if (this.ancestors.includes(error)) return '[Circular]';
    this.ancestors.push(error);
    try {
      const record: SerializedError = {
        class: errorClass(error),
        message: safeString(error.message),
      };
      if (typeof error.stack === 'string') record.stack = error.stack;
      const extra = this.properties(error, depth, ERROR_KEYS);
      Object.assign(record, extra);
      if ('code' in error && error.code !== undefined) {
        record.code = this.value(error.code, depth + 1);
      }
      if ('cause' in error && error.cause !== undefined) {
        record.cause =
          causeDepth >= MAX_CAUSE_DEPTH
            ? '[Cause chain truncated]'
            : isError(error.cause)
              ? this.error(error.cause, depth + 1, causeDepth + 1)
              : this.value(error.cause, depth + 1);
      }
      if (error instanceof AggregateError && Array.isArray(error.errors)) {
        record.errors = error.errors.map((inner: unknown) =>
          isError(inner)
            ? this.error(inner, depth + 1, causeDepth + 1)
            : (this.value(inner, depth + 1) ?? null),
        );
      }
      return record;
    } catch (err) {
      return `[Unserializable error: ${describeError(err)}]`;
    } finally {
      this.ancestors.pop();
    }
  }
}

const ERROR_KEYS: ReadonlySet<string> = new Set([
  'class',
  'message',
  'stack',
  'code',
  'cause',
  'errors',
]);

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : String(value);
  } catch {
    return '[Unprintable]';
  }
}

/**
 * A JSON-safe copy of any value (see the module comment for the rules). `within` are
 * objects that `value` was taken from: a reference back to one of them is also circular.
 */
export function normalize(value: unknown, within: readonly object[] = []): unknown {
  return new Normalizer([...within]).value(value, 0);
}

/**
 * The record logged for a thrown value: class name, message, stack, `code`, other own
 * properties, and the `cause` chain (up to {@link MAX_CAUSE_DEPTH} links). A thrown value
 * that is not an Error is recorded with its type as the class.
 */
export function serializeError(error: unknown): SerializedError {
  if (isError(error)) {
    const record = new Normalizer().error(error, 0, 0);
    return typeof record === 'string' ? { class: 'Error', message: record } : record;
  }
  const type = error === null ? 'null' : typeof error;
  const message = typeof error === 'string' ? error : safeJson(error);
  return { class: type, message };
}

/** JSON text of any value (see {@link normalize}); never throws. */
export function safeJson(value: unknown, within: readonly object[] = []): string {
  try {
    return JSON.stringify(normalize(value, within)) ?? String(value);
  } catch (err) {
    return `"[Unserializable: ${describeError(err).replace(/"/g, "'")}]"`;
  }
}

/** A value as it reads inside a message: strings as they are, everything else as JSON. */
export function stringify(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return String(value);
    case 'symbol':
      return value.toString();
    default:
      break;
  }
  if (isError(value)) return `${errorClass(value)}: ${safeString(value.message)}`;
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
  return safeJson(value);
}
