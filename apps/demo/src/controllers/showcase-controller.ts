import { Response, SocketController, type Request } from '@pkg/core';
import { HttpRoute, RateLimit } from '@pkg/decorators';
import { USER_KEY, requireAuth, type DemoUser } from '../auth';

/** Calls allowed on `GET /api/limited` per window, and the window in seconds. */
export const LIMITED_MAX = 5;
export const LIMITED_WINDOW = 60;

/** Routes that show the cross-cutting features: an auth guard, trust proxy, a rate limit. */
export class ShowcaseController extends SocketController {
  /** Guarded by the auth middleware: 401 without a valid token. */
  @HttpRoute('GET', '/api/me', { middlewares: [requireAuth] })
  me(request: Request): Response {
    const user = request.getAttribute<DemoUser>(USER_KEY);
    return Response.json({ user });
  }

  /** What the server believes about the caller; forwarded headers count only from trusted proxies. */
  @HttpRoute('GET', '/api/whoami')
  whoami(request: Request): Response {
    return Response.json({
      ip: request.getIpAddress(),
      scheme: request.getScheme(),
      host: request.getHost(),
      url: request.getUrl(true),
    });
  }

  /** At most LIMITED_MAX calls per LIMITED_WINDOW seconds per client; then 429. */
  @HttpRoute('GET', '/api/limited')
  @RateLimit(LIMITED_MAX, LIMITED_WINDOW)
  limited(_request: Request): Response {
    return Response.json({ ok: true, limit: LIMITED_MAX, window: LIMITED_WINDOW });
  }
}
