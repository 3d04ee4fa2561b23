/**
 * `mountAdmin(server, options)`: the page on `<path>` (plain HTML, a stylesheet and a script
 * read from the package's `page/` folder once), its JSON endpoints on `<path>/api/<name>`,
 * and the cluster query every instance answers (mount the admin on every instance).
 *
 * Access: the page and the endpoints answer 403 `PKG_ERR_ADMIN_FORBIDDEN` unless the request
 * passes the address rule (the metrics endpoint's, from core: `allow`, default loopback, or
 * the bearer `token`) and the `authorize` hook when one is given. With a token set, the page
 * itself (which holds no data) loads from any address and asks for the token, which its
 * script sends on every request. Actions also need a JSON body and, when the browser sends
 * an `Origin`, the page's own origin, so another site cannot post them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Response, createAccessCheck, type Request, type Server } from '@pkg/core';
import { AuditLog, type AuditEntry } from './audit';
import { AdminRequestError, createAdminError } from './errors';
import { buildEndpoints, failure } from './endpoints';
import { ADMIN_TOPIC, LocalViews } from './local-views';
import { resolveAdminOptions, type AdminOptions, type ResolvedAdminOptions } from './options';
import { ConnectionTraces } from './trace';

/** What `mountAdmin` returns. */
export interface AdminHandle {
  /** The page's path. */
  readonly path: string;
  /** This instance's audit entries, newest first. */
  audit(): AuditEntry[];
  /** Connections traced on this instance now (active or readable). */
  readonly traces: number;
  /** Stops every trace of this instance and stops answering the admin's cluster query. */
  close(): void;
}

/** The page's files: name -> content type. */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['index.html', 'text/html; charset=utf-8'],
  ['admin.js', 'text/javascript; charset=utf-8'],
  ['admin.css', 'text/css; charset=utf-8'],
]);

/** Headers of every page answer: nothing cached, no framing, scripts from the page only. */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/** The folder of the page's files, beside `src/` and `dist/`. */
function pageDir(): string {
  return path.join(__dirname, '..', 'page');
}

/** The page's files; the HTML names its stylesheet and script relative to `base`. */
function readAssets(base: string): Map<string, string> {
  const dir = pageDir();
  const files = new Map<string, string>();
  for (const name of ASSETS.keys()) files.set(name, readFileSync(path.join(dir, name), 'utf8'));
  const last = base.slice(base.lastIndexOf('/') + 1);
  files.set('index.html', files.get('index.html')!.replaceAll('{{name}}', last));
  return files;
}

/** Who the request is (for the audit), or null when it may not pass. */
function gate(
  options: ResolvedAdminOptions,
  server: Server,
): (request: Request) => Promise<string | null> {
  let check: ((request: Request) => boolean) | null = null;
  if (options.allow !== null) {
    try {
      check = createAccessCheck({
        allow: options.allow,
        token: options.token,
        trust: server.getConfig().getTrustPredicate(),
        setting: 'allow',
      });
    } catch (err) {
      throw createAdminError(TypeError, 'PKG_ERR_ADMIN_INVALID_OPTION', `mountAdmin: ${err instanceof Error ? err.message : String(err)}`); // prettier-ignore
    }
  }
  return async (request) => {
    const address = request.getIpAddress();
    let who = address;
    if (check !== null) {
      if (!check(request)) return null;
      if (/^bearer /i.test(request.getHeader('authorization') ?? '') && options.token !== null) {
        who = `token@${address}`;
      }
    }
    if (options.authorize !== null) {
      const verdict = await options.authorize(request);
      if (verdict === false) return null;
      if (typeof verdict === 'string' && verdict !== '') who = verdict;
    }
    return who;
  };
}

function forbidden(): Response {
  return Response.error(403, {
    code: 'PKG_ERR_ADMIN_FORBIDDEN',
    message:
      'The admin page is open to the addresses of its allow list (default loopback), to Authorization: Bearer <token> when a token is set, and to what its authorize hook accepts.',
  });
}

/** An action must come from the page itself: a JSON body, and no foreign Origin. */
function sameSite(request: Request): void {
  if (!request.isJson()) {
    throw new AdminRequestError('PKG_ERR_ADMIN_CROSS_SITE', 'Actions take a JSON body (Content-Type: application/json).'); // prettier-ignore
  }
  const origin = request.getHeader('origin');
  if (origin === undefined) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  if (host === undefined || host !== request.getHeader('host')) {
    throw new AdminRequestError('PKG_ERR_ADMIN_CROSS_SITE', `An action from ${origin} is not the admin page's own.`); // prettier-ignore
  }
}

/**
 * Mounts the admin page on a server (before or after `run()`): registers its routes and the
 * cluster query its views ask every instance. Throws a TypeError
 * `PKG_ERR_ADMIN_INVALID_OPTION` for a bad option.
 */
export function mountAdmin(server: Server, options: AdminOptions = {}): AdminHandle {
  const resolved = resolveAdminOptions(options);
  const allowed = gate(resolved, server);
  // Read on the first page request, so that a server bundled without the page's folder
  // still starts, serves the JSON views, and says what is missing when the page is asked for.
  let assets: Map<string, string> | undefined;
  const traces = new ConnectionTraces(resolved.trace);
  const audit = new AuditLog(resolved.auditSize, server.getLogger());
  const views = new LocalViews(server, resolved, traces);
  server.answerClusterQuery(ADMIN_TOPIC, views.answer);
  const base = resolved.path;

  const page = (name: string) => async (request: Request) => {
    if (resolved.token === null && (await allowed(request)) === null) return forbidden();
    try {
      assets ??= readAssets(resolved.path);
    } catch {
      return Response.error(500, {
        code: 'PKG_ERR_ADMIN_PAGE_MISSING',
        message: `The admin page's files are not in ${pageDir()}: a server bundled into one file must ship @pkg/admin's page/ folder beside it (the JSON views under ${base}/api/ work without it).`,
      });
    }
    return new Response(assets.get(name)!, 200, {
      ...PAGE_HEADERS,
      'Content-Type': ASSETS.get(name)!,
    });
  };
  server.route('GET', base, page('index.html'));
  server.route('GET', `${base}/admin.js`, page('admin.js'));
  server.route('GET', `${base}/admin.css`, page('admin.css'));

  for (const [key, handler] of buildEndpoints({ server, options: resolved, audit })) {
    const [method, name] = key.split(' ') as ['GET' | 'POST', string];
    server.route(method, `${base}/api/${name}`, async (request: Request) => {
      const who = await allowed(request);
      if (who === null) return forbidden();
      try {
        if (method === 'POST') sameSite(request);
        return await handler(request, who);
      } catch (err) {
        return failure(err);
      }
    });
  }

  return {
    path: base,
    audit: () => audit.list(),
    get traces() {
      return traces.size;
    },
    close() {
      traces.close();
      server.answerClusterQuery(ADMIN_TOPIC, undefined);
    },
  };
}
