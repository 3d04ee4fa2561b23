import type { IncomingHttpHeaders } from 'node:http';
import { parseHost, parsePort, type ParsedHost } from './host';
import { isCanonicalIp, normalizeIp, type TrustPredicate } from './trust-proxy';

/** One element of an RFC 7239 `Forwarded` header: what one proxy saw. */
export interface ForwardedElement {
  /** The `for` parameter as written (an address, `unknown` or an `_obfuscated` name). */
  readonly for?: string;
  readonly by?: string;
  readonly proto?: string;
  readonly host?: string;
  /** False when the element broke the grammar (bad quoting, repeated parameter, ...). */
  readonly valid: boolean;
}

/** What the forwarded headers say about the request, once trust has been applied. */
export interface ForwardedInfo {
  /** The client address (normalised): the socket's own when the peer is not trusted. */
  readonly ip: string;
  /** True when the socket peer is a trusted proxy, so forwarded values were read. */
  readonly trusted: boolean;
  /** Which header family was read: `x-forwarded`, `forwarded`, or none. */
  readonly source: 'x-forwarded' | 'forwarded' | 'none';
  /** The scheme the client used, when a trusted proxy reported `http` or `https`. */
  readonly proto?: 'http' | 'https';
  /** The host the client asked for, when a trusted proxy reported a valid one. */
  readonly host?: ParsedHost;
  /** The port the client connected to, when a trusted proxy reported it (X-Forwarded-Port). */
  readonly port?: number;
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const X_FORWARDED = [
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
] as const;

function headerText(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(',') : String(value);
}

function lastListValue(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const parts = text.split(',');
  const last = parts[parts.length - 1]?.trim();
  return last === '' ? undefined : last;
}

function parseProto(text: string | undefined): 'http' | 'https' | undefined {
  const lower = text?.toLowerCase();
  return lower === 'http' || lower === 'https' ? lower : undefined;
}

/**
 * Splits an RFC 7239 `Forwarded` header into its elements, left (nearest the client) to
 * right. Values may be tokens or quoted strings with backslash escapes; parameter names are
 * case-insensitive. An element that breaks the grammar is kept with `valid: false` so that a
 * walk from the right stops there instead of skipping it.
 */
export function parseForwardedHeader(value: string): ForwardedElement[] {
  const elements: ForwardedElement[] = [];
  let current: Record<string, string> = {};
  let valid = true;
  let i = 0;
  const n = value.length;
  const skipSpace = (): void => {
    while (i < n && (value[i] === ' ' || value[i] === '\t')) i++;
  };
  const finish = (): void => {
    if (valid && Object.keys(current).length === 0) return; // empty list element
    elements.push({ ...current, valid });
    current = {};
    valid = true;
  };
  // Skips to the next comma outside a quoted string after a grammar error.
  const skipElement = (): void => {
    valid = false;
    let quoted = false;
    while (i < n) {
      const c = value[i];
      if (quoted && c === '\\') i++;
      else if (c === '"') quoted = !quoted;
      else if (!quoted && c === ',') return;
      i++;
    }
  };
  while (i <= n) {
    skipSpace();
    if (i >= n) {
      finish();
      break;
    }
    const c = value[i];
    if (c === ',') {
      finish();
      i++;
      continue;
    }
    if (c === ';') {
      i++;
      continue;
    }
    const nameStart = i;
    while (i < n && TCHAR.test(value[i] as string)) i++;
    const name = value.slice(nameStart, i).toLowerCase();
    if (name === '' || value[i] !== '=') {
      skipElement();
      continue;
    }
    i++;
    let parsed = '';
    if (value[i] === '"') {
      i++;
      let closed = false;
      while (i < n) {
        const q = value[i] as string;
        if (q === '\\' && i + 1 < n) {
          parsed += value[i + 1];
          i += 2;
        } else if (q === '"') {
          closed = true;
          i++;
          break;
        } else {
          parsed += q;
          i++;
        }
      }
      if (!closed) {
        valid = false;
        continue;
      }
    } else {
      const start = i;
      while (i < n && TCHAR.test(value[i] as string)) i++;
      parsed = value.slice(start, i);
      if (parsed === '') {
        skipElement();
        continue;
      }
    }
    if (Object.hasOwn(current, name))
      valid = false; // a parameter may occur once per element
    else if (name === 'for' || name === 'by' || name === 'proto' || name === 'host') {
      current[name] = parsed;
    }
    skipSpace();
    if (i < n && value[i] !== ';' && value[i] !== ',') skipElement();
  }
  return elements;
}

/**
 * The IP address in a `Forwarded: for=` value (`192.0.2.1`, `192.0.2.1:8080`,
 * `[2001:db8::1]`, `[2001:db8::1]:8080`), or undefined for `unknown`, an obfuscated
 * identifier (`_hidden`) or anything that is not a canonical address.
 */
export function forwardedForAddress(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let address = value;
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close === -1) return undefined;
    const rest = value.slice(close + 1);
    if (rest !== '' && (!rest.startsWith(':') || parsePort(rest.slice(1)) === undefined)) {
      return undefined;
    }
    address = value.slice(1, close);
    return address.includes(':') && isCanonicalIp(address) ? address : undefined;
  }
  const colon = value.indexOf(':');
  if (colon !== -1) {
    if (parsePort(value.slice(colon + 1)) === undefined) return undefined;
    address = value.slice(0, colon);
  }
  return !address.includes(':') && isCanonicalIp(address) ? address : undefined;
}

interface Walk {
  ip: string;
  /** Index of the hop whose element describes the client side, or -1 for none. */
  index: number;
}

/**
 * Express `trust proxy` semantics: start at the socket peer and walk the forwarded
 * addresses from the right while each is trusted; the first untrusted one is the client. An
 * entry that is not a canonical address stops the walk, and then the trusted proxy that
 * reported it is taken as the client.
 */
function walk(
  socketIp: string,
  entries: readonly (string | undefined)[],
  trust: TrustPredicate,
): Walk {
  let ip = socketIp;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry === undefined) return { ip, index: i };
    const normal = normalizeIp(entry);
    if (!trust(entry)) return { ip: normal, index: i };
    ip = normal;
  }
  return { ip, index: entries.length === 0 ? -1 : 0 };
}

/**
 * Resolves the client address, scheme, host and port of a request from its socket address
 * and headers. From an untrusted peer every forwarded header is ignored. From a trusted peer,
 * when any `X-Forwarded-*` header is present that family is read and `Forwarded` is ignored;
 * otherwise RFC 7239 `Forwarded` is read. The two families are never mixed.
 */
export function resolveForwarded(
  remoteAddress: string | undefined,
  headers: IncomingHttpHeaders,
  trust: TrustPredicate,
): ForwardedInfo {
  const socket = remoteAddress ?? '';
  const socketIp = normalizeIp(socket);
  if (socket === '' || !trust(socket)) return { ip: socketIp, trusted: false, source: 'none' };

  if (X_FORWARDED.some((name) => headers[name] !== undefined)) {
    const forText = headerText(headers, 'x-forwarded-for');
    const entries =
      forText === undefined
        ? []
        : forText.split(',').map((part) => {
            const address = part.trim();
            return isCanonicalIp(address) ? address : undefined;
          });
    const { ip } = walk(socketIp, entries, trust);
    const proto = parseProto(lastListValue(headerText(headers, 'x-forwarded-proto')));
    const hostText = lastListValue(headerText(headers, 'x-forwarded-host'));
    const host = hostText === undefined ? undefined : parseHost(hostText);
    const portText = lastListValue(headerText(headers, 'x-forwarded-port'));
    const port = portText === undefined ? undefined : parsePort(portText);
    return { ip, trusted: true, source: 'x-forwarded', proto, host, port };
  }

  const forwardedText = headerText(headers, 'forwarded');
  if (forwardedText === undefined) return { ip: socketIp, trusted: true, source: 'none' };
  const elements = parseForwardedHeader(forwardedText);
  const entries = elements.map((e) => (e.valid ? forwardedForAddress(e.for) : undefined));
  const { ip, index } = walk(socketIp, entries, trust);
  const element = index === -1 ? undefined : elements[index];
  if (element === undefined || !element.valid) return { ip, trusted: true, source: 'forwarded' };
  const proto = parseProto(element.proto);
  const host = element.host === undefined ? undefined : parseHost(element.host);
  return { ip, trusted: true, source: 'forwarded', proto, host };
}

/**
 * The client IP address of a request: the socket's own address, unless the socket peer is
 * a trusted proxy, in which case the forwarded headers are walked (see
 * {@link resolveForwarded}). Forged headers from an untrusted peer never change the answer.
 */
export function resolveClientAddress(
  remoteAddress: string,
  headers: IncomingHttpHeaders,
  trust: TrustPredicate,
): string {
  return resolveForwarded(remoteAddress, headers, trust).ip;
}
