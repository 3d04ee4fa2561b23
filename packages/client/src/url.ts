import { createClientError } from './errors';

/**
 * The URL of one connection: `http(s):` becomes `ws(s):`, a path is resolved against the
 * page in a browser, and the query parameters are added.
 */
export function buildUrl(input: string, query: Record<string, string>): string {
  const base = (globalThis as { location?: { href?: string } }).location?.href;
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    throw createClientError(
      TypeError,
      'PKG_ERR_CLIENT_INVALID_ARGUMENT',
      `Client: "${input}" is not a URL; use one such as "ws://localhost:6001".`,
    );
  }
  if (url.protocol === 'http:') url.protocol = 'ws:';
  else if (url.protocol === 'https:') url.protocol = 'wss:';
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw createClientError(
      TypeError,
      'PKG_ERR_CLIENT_INVALID_ARGUMENT',
      `Client: "${input}" must use ws:, wss:, http: or https:.`,
    );
  }
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.toString();
}
