import { createCoreError } from '../errors';

/** The outcome of a Host check: allowed, or the status and text to refuse with. */
export type HostCheckResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly status: 400 | 403; readonly message: string };

const OK: HostCheckResult = Object.freeze({ ok: true });

/** The host name of a Host header, lower case, without the port (`[::1]` kept in brackets). */
export function hostName(header: string): string | null {
  const value = header.trim().toLowerCase();
  if (value === '') return null;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return null;
    const rest = value.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null;
    return value.slice(0, end + 1);
  }
  const colon = value.indexOf(':');
  const name = colon < 0 ? value : value.slice(0, colon);
  if (colon >= 0 && !/^\d{1,5}$/.test(value.slice(colon + 1))) return null;
  if (!/^[a-z0-9.-]+$/.test(name)) return null;
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/**
 * Compiles `allowed_hosts` into a check of the Host header: `'*'` allows any, a name allows
 * that host (any port, case-insensitive), `.example.com` allows example.com and its
 * subdomains. A missing or malformed Host is 400, a host not in the list 403. This is what
 * stops DNS rebinding: a page on attacker.example that resolves to this server still sends
 * `Host: attacker.example`.
 */
export function compileHostCheck(
  allowed: readonly string[],
): (header: string | undefined) => HostCheckResult {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  let any = false;
  for (const raw of allowed) {
    const entry = raw.trim().toLowerCase();
    if (entry === '*') any = true;
    else if (entry.startsWith('.')) suffixes.push(entry);
    else {
      const name = hostName(entry);
      if (name === null) {
        throw createCoreError(
          TypeError,
          'PKG_ERR_CORE_INVALID_CONFIG',
          `ServerConfig: "allowed_hosts" has ${JSON.stringify(raw)}, which is not a host name; use names such as "example.com", ".example.com" or "localhost".`,
        );
      }
      exact.add(name);
    }
  }
  return (header) => {
    if (header === undefined) {
      return { ok: false, status: 400, message: 'A Host header is required.' };
    }
    const name = hostName(header);
    if (name === null) return { ok: false, status: 400, message: 'The Host header is malformed.' };
    if (any || exact.has(name)) return OK;
    for (const suffix of suffixes) {
      if (name === suffix.slice(1) || name.endsWith(suffix)) return OK;
    }
    return { ok: false, status: 403, message: 'This host name is not served here.' };
  };
}
