import secureJson from 'secure-json-parse';
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
 * What to do with `__proto__` and `constructor.prototype` keys in JSON from the network:
 * `'error'` refuses the document (400), `'remove'` drops those keys and keeps the rest.
 */
export type PrototypeKeysPolicy = 'error' | 'remove';

const REFUSE = Object.freeze({ protoAction: 'error', constructorAction: 'error' } as const);
const REMOVE = Object.freeze({ protoAction: 'remove', constructorAction: 'remove' } as const);
/** secure-json-parse's message for a refused key (any other SyntaxError is malformed JSON). */
const FORBIDDEN_KEY_MESSAGE = 'Object contains forbidden prototype property';

/**
 * Parses JSON text once with secure-json-parse, so that a `__proto__` or
 * `constructor.prototype` key can never reach an object's prototype when the value is later
 * merged. With `'error'` (the default) such a key is an `HttpError` 400
 * (`PKG_ERR_HTTP_INVALID_JSON`) that says so; with `'remove'` the keys are dropped. Malformed
 * JSON is the same 400.
 */
export function parseJsonSafely(
  text: string,
  prototypeKeys: PrototypeKeysPolicy = 'error',
): unknown {
  try {
    return secureJson.parse(text, null, prototypeKeys === 'remove' ? REMOVE : REFUSE) as unknown;
  } catch (err) {
    if ((err as Error).message === FORBIDDEN_KEY_MESSAGE) {
      throw new HttpError(
        'PKG_ERR_HTTP_INVALID_JSON',
        'The request body is refused: it contains a "__proto__" or "constructor.prototype" ' +
          'key, which could alter object prototypes. Remove the key, or configure ' +
          "prototypeKeys: 'remove' to have such keys dropped.",
        { cause: err },
      );
    }
    throw new HttpError(
      'PKG_ERR_HTTP_INVALID_JSON',
      `The request body is not valid JSON (${(err as Error).message}). Send a JSON document ` +
        `or a different Content-Type.`,
      { cause: err },
    );
  }
}

/** JSON text without a leading byte-order mark; a blank document is `null`. */
function parseJsonText(decoded: string, prototypeKeys: PrototypeKeysPolicy): unknown {
  const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  // A document starting with `{` or `[` is not blank; only others need the trim.
  const first = text.charCodeAt(0);
  if (first !== 0x7b && first !== 0x5b && text.trim() === '') return null;
  return parseJsonSafely(text, prototypeKeys);
}

/**
 * Turns the body bytes into a value according to the Content-Type: JSON (any `json` type),
 * `application/x-www-form-urlencoded` (an object of strings and string arrays), `text/*`
 * (a string), and the bytes as a Buffer for everything else, including bodies with a
 * Content-Encoding other than identity (they are not decompressed). An empty body is
 * `null`, except for forms (`{}`) and text (`''`). `prototypeKeys` applies to JSON bodies.
 */
export function parseBody(
  raw: Buffer,
  contentType: string | undefined,
  contentEncoding?: string,
  prototypeKeys: PrototypeKeysPolicy = 'error',
): unknown {
  if (contentEncoding !== undefined) {
    const encoding = contentEncoding.trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') return raw.length === 0 ? null : raw;
  }
  // The usual JSON body: its type needs no parsing and its charset is UTF-8.
  if (contentType === 'application/json') return parseJsonText(raw.toString('utf8'), prototypeKeys);
  const type = mediaType(contentType);
  if (isJsonMediaType(type)) return parseJsonText(decodeText(raw, contentType), prototypeKeys);
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
