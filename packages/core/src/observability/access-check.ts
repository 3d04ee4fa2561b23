/**
 * Who may read an operator's endpoint (the metrics path, `@pkg/admin`'s page): the
 * addresses of an allow list (default loopback only, matched by the same code as
 * `trust_proxy`), or a request with `Authorization: Bearer <token>` when a token is set. A
 * request that a proxy on an allowed address forwarded (it carries `X-Forwarded-For` /
 * `Forwarded` and the proxy is not trusted) needs the token: otherwise every client of a
 * reverse proxy on the same machine would pass as that machine.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { compileTrustProxy, type Request, type TrustPredicate } from '@pkg/http';

/** What {@link accessAllowed} decides by. */
export interface AccessRule {
  /** Addresses that may read (a compiled allow list). */
  readonly allow: TrustPredicate;
  /** The bearer token that also grants access, or null. */
  readonly token: string | null;
  /** `trust_proxy`: a forwarded request from a trusted proxy is judged by its client address. */
  readonly trust: TrustPredicate;
}

/** What {@link createAccessCheck} takes. */
export interface AccessCheckOptions {
  /**
   * Addresses, CIDR ranges or the names `loopback`, `linklocal`, `uniquelocal` (as in
   * `trust_proxy`); an empty list lets no address in without the token.
   */
  readonly allow: readonly string[];
  /** A bearer token that grants access from any address; null or undefined: none. */
  readonly token?: string | null;
  /** The server's `trust_proxy` predicate (`server.getConfig().getTrustPredicate()`). */
  readonly trust: TrustPredicate;
  /** The option's name, for the error a bad `allow` entry throws. */
  readonly setting?: string;
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Compares a presented token with the configured one in constant time. */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** True when the request may read; see the module comment. */
export function accessAllowed(request: Request, rule: AccessRule): boolean {
  const auth = request.getHeader('authorization');
  if (rule.token !== null && auth !== undefined && /^bearer /i.test(auth)) {
    return tokenMatches(auth.slice(7).trim(), rule.token);
  }
  const peer = request.getRemoteAddress();
  const forwarded = request.hasHeader('x-forwarded-for') || request.hasHeader('forwarded');
  if (forwarded && !rule.trust(peer)) return false;
  return rule.allow(request.getIpAddress());
}

/**
 * The same decision as the metrics endpoint's, for another endpoint: compiles `allow` once
 * (a bad entry throws a TypeError naming `setting`) and returns `(request) => boolean`.
 */
export function createAccessCheck(options: AccessCheckOptions): (request: Request) => boolean {
  const rule: AccessRule = {
    allow: compileTrustProxy([...options.allow], options.setting ?? 'allow'),
    token: options.token ?? null,
    trust: options.trust,
  };
  return (request) => accessAllowed(request, rule);
}
