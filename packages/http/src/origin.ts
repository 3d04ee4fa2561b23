/**
 * Origins in one spelling. Browsers send `Origin` serialised as RFC 6454 says: scheme and
 * host in lower case, the port only when it is not the scheme's default, no path. An
 * allow-list may be written otherwise (`https://app.example.com:443`, `HTTPS://App.example.com/`),
 * so its entries are brought to that spelling once, and an `Origin` value that is not in it
 * is compared in it too. CORS uses this, and `@pkg/core` hands the WebSocket origin policy
 * the list spelt this way, so one list means the same origins to both.
 */

/**
 * The serialisation of `text` as an origin (`scheme://host[:port]`, lower case, a default
 * port left out), or undefined when it is not one: `null`, a path, a query, credentials or
 * something that is not a URL at all.
 */
export function serializeOrigin(text: string): string | undefined {
  if (text === 'null') return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.host === '' || url.username !== '' || url.password !== '') return undefined;
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    return undefined;
  }
  // The WHATWG parser drops the default port of http, https, ws and wss itself.
  return `${url.protocol}//${url.host}`.toLowerCase();
}

/**
 * An allow-list entry in the spelling of {@link serializeOrigin}: `'*'` and `'null'` as they
 * are, an origin serialised, a subdomain pattern (`https://*.example.com:443`) with its
 * scheme, domain and port serialised (`https://*.example.com`). Undefined when the entry is
 * none of these.
 */
export function normalizeOriginEntry(entry: string): string | undefined {
  if (entry === '*' || entry === 'null') return entry;
  const wildcard = /^([a-z][a-z0-9+.-]*:\/\/)\*\.(.+)$/i.exec(entry);
  if (wildcard === null) return entry.includes('*') ? undefined : serializeOrigin(entry);
  // A placeholder label stands for the `*` while the rest is parsed.
  const serialized = serializeOrigin(`${wildcard[1]}x.${wildcard[2]}`);
  if (serialized === undefined) return undefined;
  const scheme = wildcard[1]!.toLowerCase();
  return `${scheme}*.${serialized.slice(scheme.length + 2)}`;
}
