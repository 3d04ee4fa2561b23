import type { HandshakeHook } from '@pkg/core';

/**
 * WebSocket origin rule of the demo: a browser page may connect when it was served by this
 * server (its Origin's host equals the request's Host), or when its origin is in `allowed`
 * (CORS_ORIGINS; `*` allows all). Clients that send no Origin (not browsers) are accepted.
 * Anything else is refused with 403 before the upgrade.
 *
 * The server's own origin check is opened (`ws_allowed_origins: ['*']`) and this hook does
 * the work instead, so that setting CORS_ORIGINS for other sites never locks out the chat page.
 */
export function createOriginCheck(allowed: readonly string[]): HandshakeHook {
  const anyOrigin = allowed.includes('*');
  const origins = new Set(allowed.map((origin) => origin.toLowerCase()));
  return (ctx) => {
    const origin = ctx.origin;
    if (origin === undefined || anyOrigin || origins.has(origin.toLowerCase())) return undefined;
    const host = ctx.headers.host?.toLowerCase();
    try {
      if (host !== undefined && new URL(origin).host.toLowerCase() === host) return undefined;
    } catch {
      // An Origin that is not a URL ("null" from a sandboxed frame) is not same-origin.
    }
    return { status: 403, message: 'Origin not allowed.' };
  };
}
