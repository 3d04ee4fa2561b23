import { isIPv6 } from 'node:net';

/** A host as written in `Host`, `X-Forwarded-Host` or `Forwarded: host=`. */
export interface ParsedHost {
  /** The name or IP; an IPv6 literal keeps its brackets (`[::1]`). Lower case. */
  hostname: string;
  /** The port, when one was written. */
  port?: number;
}

// RFC 3986 reg-name without percent-escapes and sub-delims: letters, digits, "-", ".", "_".
const REG_NAME = /^[A-Za-z0-9._-]+$/;
const PORT = /^[0-9]{1,5}$/;

/** Parses a port written in decimal (1 to 65535), or undefined. */
export function parsePort(text: string): number | undefined {
  if (!PORT.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/**
 * Parses `host[:port]` strictly: a name of letters, digits, `-`, `.` and `_`, or an IPv6
 * literal in brackets, then an optional decimal port. Anything else (spaces, `@`, `/`, an
 * empty port) gives undefined, so that a hostile value never reaches a built URL.
 */
export function parseHost(value: string): ParsedHost | undefined {
  let hostname: string;
  let rest: string;
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close === -1) return undefined;
    const literal = value.slice(1, close);
    if (literal.includes('%') || !isIPv6(literal)) return undefined;
    hostname = value.slice(0, close + 1);
    rest = value.slice(close + 1);
  } else {
    const colon = value.indexOf(':');
    hostname = colon === -1 ? value : value.slice(0, colon);
    rest = colon === -1 ? '' : value.slice(colon);
    if (!REG_NAME.test(hostname)) return undefined;
  }
  hostname = hostname.toLowerCase();
  if (rest === '') return { hostname };
  if (!rest.startsWith(':')) return undefined;
  const port = parsePort(rest.slice(1));
  return port === undefined ? undefined : { hostname, port };
}

let lastHost = '';
let lastParsed: ParsedHost | undefined;

/**
 * {@link parseHost} remembering the last value, which most requests repeat. The result is
 * shared between callers: read it, never write to it.
 */
export function parseHostCached(value: string): Readonly<ParsedHost> | undefined {
  if (value !== lastHost || lastParsed === undefined) {
    lastParsed = parseHost(value);
    lastHost = value;
  }
  return lastParsed;
}

/** The default port of a scheme: 443 for https, 80 otherwise. */
export function defaultPort(scheme: string): number {
  return scheme === 'https' ? 443 : 80;
}
