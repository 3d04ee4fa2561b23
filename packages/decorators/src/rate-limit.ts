import type { RateLimitRule } from '@pkg/http';
import { decError } from './errors';
import { openMethodRecord } from './store';
import { validateRateLimit } from './validate';

/** The decorator `RateLimit(...)` returns: it fits any method; the reader checks that it has a route. */
type RateLimitDecorator = <This>(
  target: (this: This, ...args: never[]) => unknown,
  context: ClassMethodDecoratorContext<This>,
) => void;

/**
 * Limits calls of the method's routes to `maxCount` per `timeWindow` seconds. On an
 * `HttpRoute` method the limit is per route and client IP (over it: 429 with `Retry-After`);
 * on a `SocketOn` method it is per event and client address (over it: an `error` event with code
 * `rate_limited`). The server enforces it; this decorator only records it. A method with
 * `RateLimit` but no route decorator is an error when the controller is read.
 *
 * @example
 * class ApiController extends SocketController {
 *   @HttpRoute('POST', '/api/broadcast')
 *   @RateLimit(10, 60) // 10 requests per minute per client IP
 *   send(request: Request): Response { ... }
 * }
 */
export function RateLimit(maxCount: number, timeWindow: number): RateLimitDecorator;
/** The same, with the rule as an object: `RateLimit({ maxCount: 10, timeWindow: 60 })`. */
export function RateLimit(rule: RateLimitRule): RateLimitDecorator;
export function RateLimit(...args: unknown[]): RateLimitDecorator {
  return (target: unknown, context: unknown): void => {
    const { method, site } = openMethodRecord('RateLimit', target, context);
    const rule = validateRateLimit(args[0], args[1], args.length, site);
    if (method.rateLimit !== undefined) {
      throw decError(
        'PKG_ERR_DEC_DUPLICATE_RATE_LIMIT',
        `${site}: the method already has a RateLimit. Keep one @RateLimit() per method.`,
      );
    }
    method.rateLimit = rule;
  };
}
