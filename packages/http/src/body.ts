import { HttpError } from './errors';
import { hasValidEscapes, parseQueryString } from './target';

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** True for `application/json` and any `+json` suffix type (`application/problem+json`). */
export function isJsonMediaType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

function charsetOf(contentType: string | undefined): string {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return (match?.[1] ?? 'utf-8').toLowerCase();
}

function decodeText(raw: Buffer, contentType: string | undefined): string {
  const charset = charsetOf(contentType);
  if (charset === 'iso-8859-1' || charset === 'latin1' || charset === 'us-ascii') {
    return raw.toString('latin1');
  }
  return raw.toString('utf8');
}

/**
 * Drops keys that could reach a prototype when the parsed object is later merged with
 * `Object.assign` or a deep merge: `__proto__`, and `constructor` when its value carries a
 * `prototype` member.
 */
function safeReviver(this: unknown, key: string, value: unknown): unknown {
  if (key === '__proto__') return undefined;
  if (
    key === 'constructor' &&
    value !== null &&
    typeof value === 'object' &&
    Object.hasOwn(value, 'prototype')
  ) {
    return undefined;
  }
  return value;
}

/**
 * Parses JSON text without letting `__proto__` or `constructor.prototype` keys through.
 * Malformed JSON is an `HttpError` with status 400 (`PKG_ERR_HTTP_INVALID_JSON`).
 */
export function parseJsonSafely(text: string): unknown {
  try {
    return JSON.parse(text, safeReviver) as unknown;
  } catch (err) {
    throw new HttpError(
      'PKG_ERR_HTTP_INVALID_JSON',
      `The request body is not valid JSON (${(err as Error).message}). Send a JSON document ` +
        `or a different Content-Type.`,
      { cause: err },
    );
  }
}

/**
 * Turns the body bytes into a value according to the Content-Type: JSON (any `json` type),
 * `application/x-www-form-urlencoded` (an object of strings and string arrays), `text/*`
 * (a string), and the bytes as a Buffer for everything else, including bodies with a
 * Content-Encoding other than identity (they are not decompressed). An empty body is
 * `null`, except for forms (`{}`) and text (`''`).
 */
export function parseBody(
  raw: Buffer,
  contentType: string | undefined,
  contentEncoding?: string,
): unknown {
  const type = mediaType(contentType);
  const encoding = contentEncoding?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    return raw.length === 0 ? null : raw;
  }
  if (isJsonMediaType(type)) {
    const text = decodeText(raw, contentType).replace(/^\uFEFF/, '');
    return text.trim() === '' ? null : parseJsonSafely(text);
  }
  if (type === 'application/x-www-form-urlencoded') {
    const text = raw.toString('utf8');
    if (!hasValidEscapes(text, true)) {
      throw new HttpError(
        'PKG_ERR_HTTP_INVALID_FORM',
        'The form-urlencoded request body has a malformed percent-escape; encode "%" as "%25".',
      );
    }
    return parseQueryString(text);
  }
  if (type.startsWith('text/')) return decodeText(raw, contentType);
  return raw.length === 0 ? null : raw;
}
