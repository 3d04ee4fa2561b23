/**
 * The origin allow-list of the handshake. Entries are `'*'` (any origin), an exact origin
 * (`https://app.example.com`, compared case-insensitively, default ports and a trailing `/`
 * ignored), or a subdomain pattern (`https://*.example.com`, which matches
 * `https://a.example.com` and `https://a.b.example.com` but not `https://example.com`).
 */
import { createWsError } from './errors';

/** Decides whether an `Origin` header value (or its absence) may open a connection. */
export type OriginPredicate = (origin: string | undefined) => boolean;

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** `scheme://host[:port]` in lower case without a default port, or undefined if not a URL. */
function normalize(origin: string): string | undefined {
  if (origin === 'null') return undefined;
  try {
    const url = new URL(origin);
    if (url.host === '') return undefined;
    const port = url.port !== '' && DEFAULT_PORTS[url.protocol] !== url.port ? `:${url.port}` : '';
    return `${url.protocol}//${url.hostname}${port}`.toLowerCase();
  } catch {
    return undefined;
  }
}

interface Pattern {
  scheme: string;
  suffix: string;
}

/** Validates the list once and returns the predicate used on every handshake. */
export function compileOriginPolicy(
  allowedOrigins: readonly string[],
  allowMissingOrigin: boolean,
): OriginPredicate {
  let any = false;
  const exact = new Set<string>();
  const patterns: Pattern[] = [];
  for (const entry of allowedOrigins) {
    if (typeof entry !== 'string') {
      throw createWsError(
        TypeError,
        'PKG_ERR_WS_INVALID_OPTION',
        `allowedOrigins: every entry must be a string, got ${typeof entry}.`,
      );
    }
    if (entry === '*') {
      any = true;
      continue;
    }
    const wildcard = /^([a-z][a-z0-9+.-]*:)\/\/\*\.(.+)$/i.exec(entry);
    if (wildcard) {
      const rest = normalize(`${wildcard[1]}//${wildcard[2]}`);
      if (rest !== undefined) {
        const scheme = `${wildcard[1]!.toLowerCase()}//`;
        patterns.push({ scheme, suffix: `.${rest.slice(scheme.length)}` });
        continue;
      }
    }
    const normalized = entry.includes('*') ? undefined : normalize(entry);
    if (normalized === undefined) {
      throw createWsError(
        TypeError,
        'PKG_ERR_WS_INVALID_OPTION',
        `allowedOrigins: ${JSON.stringify(entry)} is not an origin; use '*', 'https://app.example.com' or 'https://*.example.com'.`,
      );
    }
    exact.add(normalized);
  }
  return (origin) => {
    if (origin === undefined || origin === '') return allowMissingOrigin;
    if (any) return true;
    const normalized = normalize(origin);
    if (normalized === undefined) return false;
    if (exact.has(normalized)) return true;
    return patterns.some((p) => normalized.startsWith(p.scheme) && normalized.endsWith(p.suffix));
  };
}
