import { HttpError } from './errors';

/** The parts of a request-target that a server uses. */
export interface RequestTarget {
  /** The path as sent: still percent-encoded, with no dot-segment or backslash rewriting. */
  readonly path: string;
  /** The query string without the leading `?` (empty when there is none). */
  readonly query: string;
}

const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

function malformed(target: string, why: string): HttpError {
  const shown = target.length > 200 ? `${target.slice(0, 200)}...` : target;
  return new HttpError(
    'PKG_ERR_HTTP_MALFORMED_URL',
    `Malformed request target ${JSON.stringify(shown)}: ${why}.`,
  );
}

/** True when every percent-escape in `text` is well formed and the bytes are UTF-8. */
export function hasValidEscapes(text: string, plusIsSpace = false): boolean {
  if (!text.includes('%')) return true;
  try {
    decodeURIComponent(plusIsSpace ? text.replace(/\+/g, ' ') : text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Splits a request-target (origin-form `/path?query`, absolute-form
 * `http://host/path?query`, or `*`) into path and query. A malformed percent-escape, in the
 * path or in the query, is an `HttpError` with status 400 (`PKG_ERR_HTTP_MALFORMED_URL`).
 * The path is not normalised: `..` segments, double slashes and backslashes stay as sent,
 * so what a router matches is exactly what the client asked for.
 */
export function parseRequestTarget(target: string): RequestTarget {
  if (target === '*') return { path: '*', query: '' };
  let rest = target;
  if (!rest.startsWith('/')) {
    const absolute = ABSOLUTE_FORM.exec(rest);
    if (absolute === null) throw malformed(target, 'it must start with "/"');
    rest = rest.slice(absolute[0].length);
    if (rest === '' || rest.startsWith('?')) rest = `/${rest}`;
    if (!rest.startsWith('/')) throw malformed(target, 'it has no path after the authority');
  }
  return rest.length <= SCAN_LIMIT ? scanTarget(target, rest) : searchTarget(target, rest);
}

/**
 * Targets up to this many characters are split in one pass over their characters; longer
 * ones with the engine's searches and a regular expression, which cost more per call but
 * less per character. Timed one against the other (tools/bench/micro/target-split.ts), the
 * two cost about the same at 32-34 characters; a 9-character path took 17-26 ns against
 * 46-73 ns, a 66-character target with a query 174-177 ns against 146-156 ns.
 */
export const SCAN_LIMIT = 32;

function controlCharacter(target: string): HttpError {
  return malformed(target, 'it contains a space or control character');
}

/**
 * Splits `rest` (from its leading `/`) in one pass: the first `?` ends the path, a `#` ends
 * the target, a space or control character before it is refused, and escapes are checked
 * only when there is a `%`.
 */
export function scanTarget(target: string, rest: string): RequestTarget {
  let end = rest.length;
  let mark = -1;
  let escapes = false;
  for (let i = 0; i < end; i++) {
    const code = rest.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) throw controlCharacter(target);
    if (code === 0x23) {
      // `#`: the fragment is not part of the target.
      end = i;
    } else if (code === 0x3f) {
      if (mark === -1) mark = i;
    } else if (code === 0x25) {
      escapes = true;
    }
  }
  const path = mark === -1 ? rest.slice(0, end) : rest.slice(0, mark);
  const query = mark === -1 ? '' : rest.slice(mark + 1, end);
  return escapes ? withValidEscapes(target, path, query) : { path, query };
}

/** The same split as {@link scanTarget}, with `indexOf` and a regular expression. */
export function searchTarget(target: string, whole: string): RequestTarget {
  const hash = whole.indexOf('#');
  const rest = hash === -1 ? whole : whole.slice(0, hash);
  const mark = rest.indexOf('?');
  const path = mark === -1 ? rest : rest.slice(0, mark);
  const query = mark === -1 ? '' : rest.slice(mark + 1);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f]/.test(rest)) throw controlCharacter(target);
  return withValidEscapes(target, path, query);
}

/** `{path, query}`, or a 400 naming the part with a malformed percent-escape. */
function withValidEscapes(target: string, path: string, query: string): RequestTarget {
  if (!hasValidEscapes(path)) throw malformed(target, 'the path has a malformed percent-escape');
  if (!hasValidEscapes(query, true)) {
    throw malformed(target, 'the query has a malformed percent-escape');
  }
  return { path, query };
}

/**
 * Parses a query string (or form-urlencoded body) with the platform's URLSearchParams into
 * an object without a prototype. A repeated key gives an array of its values in order. A
 * `__proto__` key (however it is percent-encoded) is dropped, as in JSON bodies: with
 * `__proto__=a&__proto__=b` kept as an array, a later `Object.assign({}, form)` would give
 * the target an array prototype, and a naive deep merge would write `Object.prototype[0]`.
 */
export function parseQueryString(query: string): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = Object.create(null) as Record<
    string,
    string | string[]
  >;
  for (const [key, value] of new URLSearchParams(query)) {
    if (key === '__proto__') continue;
    const existing = result[key];
    if (existing === undefined) result[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else result[key] = [existing, value];
  }
  return result;
}
