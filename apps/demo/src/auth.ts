import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  Response,
  type AuthHandler,
  type HandshakeHook,
  type HttpMiddlewareFn,
  type Request,
} from '@pkg/core';

/** A signed-in user of the demo. */
export interface DemoUser {
  readonly id: string;
  readonly name: string;
  readonly role: 'user' | 'admin';
}

/**
 * The demo's fixed tokens. A real application would look tokens up in a store or verify a
 * signed token here; the shape of the middleware stays the same.
 */
export const DEMO_TOKENS: Readonly<Record<string, DemoUser>> = Object.freeze({
  'alice-token': { id: 'alice', name: 'Alice', role: 'user' },
  'bob-token': { id: 'bob', name: 'Bob', role: 'user' },
  'admin-token': { id: 'admin', name: 'Admin', role: 'admin' },
});

/** Name under which the user is stored: request attribute (HTTP) and client data (WebSocket). */
export const USER_KEY = 'user';

/**
 * Result of reading credentials: `none` when the request carries no token at all,
 * `invalid` when it carries one that is not known (or a non-Bearer Authorization header).
 */
export type AuthResult =
  | { readonly kind: 'none' }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'user'; readonly user: DemoUser };

/** Reads the token from `Authorization: Bearer <token>` or, failing that, from `?key=<token>`. */
export function authenticate(
  authorization: string | undefined,
  key: string | null | undefined,
  tokens: Readonly<Record<string, DemoUser>> = DEMO_TOKENS,
): AuthResult {
  let token: string | undefined;
  if (authorization !== undefined && authorization !== '') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) return { kind: 'invalid' };
    token = match[1];
  } else if (key !== undefined && key !== null && key !== '') {
    token = key;
  }
  if (token === undefined) return { kind: 'none' };
  const user = Object.hasOwn(tokens, token) ? tokens[token] : undefined;
  return user ? { kind: 'user', user } : { kind: 'invalid' };
}

function queryKey(request: Request): string | undefined {
  const value: unknown = request.getQuery('key');
  return typeof value === 'string' ? value : undefined;
}

/**
 * HTTP route middleware: answers 401 unless the request carries a valid token, and stores
 * the user as the request attribute `user` for the handler (`request.getAttribute('user')`).
 */
export const requireAuth: HttpMiddlewareFn = async (request, next) => {
  const result = authenticate(request.getHeader('authorization') ?? undefined, queryKey(request));
  if (result.kind !== 'user') {
    return Response.json(
      {
        error:
          result.kind === 'none'
            ? 'Authentication required: send "Authorization: Bearer <token>" or ?key=<token>.'
            : 'Invalid token.',
      },
      401,
      { 'WWW-Authenticate': 'Bearer realm="demo"' },
    );
  }
  request.setAttribute(USER_KEY, result.user);
  return next();
};

/**
 * HTTP route middleware for one role: 401 without a valid token (as {@link requireAuth}),
 * 403 when the user has another role; otherwise the user is the request attribute `user`.
 */
export function requireRole(role: DemoUser['role']): HttpMiddlewareFn {
  return (request, next) =>
    requireAuth(request, () => {
      const user = request.getAttribute<DemoUser>(USER_KEY);
      if (user?.role !== role) {
        return Promise.resolve(
          Response.json(
            { error: `This route is for the ${role} role; use a token of that role.` },
            403,
          ),
        );
      }
      return next();
    });
}

/**
 * WebSocket handshake hook: anonymous clients are accepted, a valid token attaches its user
 * to the client's data (`server.getClientData(id, 'user')`), an invalid token is refused
 * with 401 before the upgrade.
 */
export const authenticateHandshake: HandshakeHook = (ctx) => {
  const header = ctx.headers.authorization;
  const result = authenticate(header, ctx.query.get('key'));
  if (result.kind === 'invalid') return { status: 401, message: 'Invalid token.' };
  if (result.kind === 'user') ctx.data[USER_KEY] = result.user;
  return undefined;
};

/** How long a session token of `POST /api/token` holds (ms): the page refreshes it before then. */
export const SESSION_TOKEN_TTL = 5 * 60_000;

/**
 * Short-lived session tokens: `POST /api/token` (with a demo token) issues
 * `s.<user id>.<expiresAt ms>.<HMAC>`; `$hello.auth` and `$refresh` accept it until it
 * expires, so a connection signed in with one must refresh before `expiresAt`. The secret
 * comes from `DEMO_TOKEN_SECRET` (the same on every instance that shares the demo), else a
 * random one per process.
 */
export class SessionTokens {
  readonly #secret: Buffer;
  readonly #ttl: number;
  readonly #users: Readonly<Record<string, DemoUser>>;

  constructor(
    secret: string | undefined = process.env['DEMO_TOKEN_SECRET'],
    ttl = SESSION_TOKEN_TTL,
    tokens: Readonly<Record<string, DemoUser>> = DEMO_TOKENS,
  ) {
    this.#secret = secret === undefined || secret === '' ? randomBytes(32) : Buffer.from(secret);
    this.#ttl = ttl;
    this.#users = Object.fromEntries(Object.values(tokens).map((u) => [u.id, u]));
  }

  issue(user: DemoUser, now = Date.now()): { token: string; expiresAt: number } {
    const expiresAt = now + this.#ttl;
    const body = `s.${user.id}.${expiresAt}`;
    return { token: `${body}.${this.#sign(body)}`, expiresAt };
  }

  /** The user and expiry of a valid, unexpired session token; undefined otherwise. */
  verify(token: string, now = Date.now()): { user: DemoUser; expiresAt: number } | undefined {
    const parts = token.split('.');
    if (parts.length !== 4 || parts[0] !== 's') return undefined;
    const [, id, at, signature] = parts as [string, string, string, string];
    const expected = Buffer.from(this.#sign(`s.${id}.${at}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const expiresAt = Number(at);
    const user = Object.hasOwn(this.#users, id) ? this.#users[id] : undefined;
    if (user === undefined || !Number.isSafeInteger(expiresAt) || expiresAt <= now)
      return undefined;
    return { user, expiresAt };
  }

  #sign(body: string): string {
    return createHmac('sha256', this.#secret).update(body).digest('base64url');
  }
}

/**
 * Auth handler of protocol version 1: reads the token a client sends in `$hello.auth` (the
 * client's `auth` option, which is how the chat page signs in, so the token never appears
 * in a URL or an access log). A known token is accepted with the user's id as the
 * connection's identity (`{ identity }`), and so is a user the handshake already signed in
 * (Authorization header or `?key=`): the server then refuses to resume that user's session
 * for anyone else (`$welcome` `resumed: false`, `reason: "identity"`). No credentials at all
 * (a guest, or a version 0 client) is accepted as it is, without an identity; an unknown
 * token is refused with 401 (close 4401). `setUser` stores the user as the client's data
 * `user`.
 */
export function createHelloAuth(
  setUser: (clientId: string, user: DemoUser) => void,
  tokens: Readonly<Record<string, DemoUser>> = DEMO_TOKENS,
  sessions?: SessionTokens,
): AuthHandler {
  return ({ clientId, auth, data }) => {
    if (auth === undefined || auth === '') {
      const signedIn = data[USER_KEY] as DemoUser | undefined;
      return signedIn === undefined ? true : { identity: signedIn.id };
    }
    // A session token of POST /api/token: accepted until it expires (the page refreshes it).
    const session = sessions?.verify(auth);
    if (session !== undefined) {
      setUser(clientId, session.user);
      return { identity: session.user.id, expiresAt: session.expiresAt };
    }
    const user = Object.hasOwn(tokens, auth) ? tokens[auth] : undefined;
    if (user === undefined) return { status: 401, message: 'Invalid token.' };
    setUser(clientId, user);
    return { identity: user.id };
  };
}
