import { decError } from './errors';
import { readOwnRecord } from './store';
import type { MethodRecord } from './store';
import type { ControllerMetadata, HttpRouteMetadata, SocketRouteMetadata } from './types';
import { describeValue, httpRouteKey, methodName } from './validate';

interface Declared {
  record: MethodRecord;
  /** Index of the declaring class in the chain, base class 0. */
  level: number;
  owner: string;
}

function className(ctor: { name?: unknown }): string {
  return typeof ctor.name === 'string' && ctor.name !== '' ? ctor.name : '(anonymous class)';
}

/**
 * Reads what the decorators declared on a controller class and on every class it extends.
 *
 * Inheritance rules, walking from the base class down to `controller`:
 * - a method decorated in a subclass replaces everything its base classes declared for the
 *   same method name (routes, hooks and rate limit alike);
 * - a WebSocket event, or an HTTP method + path pattern, declared in a subclass replaces
 *   the base class's route for it, whichever method the base class used;
 * - a method overridden WITHOUT decorators keeps the inherited declarations; they name the
 *   method, so the subclass's override is what the server calls.
 *
 * Routes come in class order (base first), then method order, then decorator order as
 * written. Each call returns fresh arrays the caller may change. Throws a `TypeError`
 * naming the class and method when a `RateLimit` method has no route decorator.
 */
export function getControllerMetadata(
  controller: abstract new (...args: never[]) => unknown,
): ControllerMetadata {
  if (typeof controller !== 'function') {
    const hint =
      typeof controller === 'object' && controller !== null
        ? ' Pass the class itself; for an instance, pass instance.constructor.'
        : '';
    throw decError(
      'PKG_ERR_DEC_INVALID_CONTROLLER',
      `getControllerMetadata() needs a controller class, got ${describeValue(controller)}.${hint}`,
    );
  }

  const chain: object[] = [];
  for (
    let ctor: unknown = controller;
    typeof ctor === 'function' && ctor !== Function.prototype;
    ctor = Object.getPrototypeOf(ctor)
  ) {
    chain.unshift(ctor);
  }

  // Method name -> the most derived declaration. Map.set on an existing key keeps the
  // base class's position, so an overriding method stays where the base declared it.
  const methods = new Map<string | symbol, Declared>();
  chain.forEach((ctor, level) => {
    const own = readOwnRecord(ctor);
    if (own === undefined) return;
    for (const [name, record] of own.methods) {
      methods.set(name, { record, level, owner: className(ctor) });
    }
  });

  // Route key -> the level of the most derived class declaring it.
  const winner = new Map<string, number>();
  const claim = (key: string, level: number): void => {
    winner.set(key, Math.max(level, winner.get(key) ?? -1));
  };
  for (const { record, level, owner } of methods.values()) {
    if (
      record.rateLimit !== undefined &&
      record.socketRoutes.length === 0 &&
      record.httpRoutes.length === 0
    ) {
      throw decError(
        'PKG_ERR_DEC_RATE_LIMIT_WITHOUT_ROUTE',
        `@RateLimit() on ${owner}.${methodName(record.name)}: the method has neither @HttpRoute() nor @SocketOn(), ` +
          'so there is nothing to limit. Add the route decorator to this method (a method that ' +
          'overrides a decorated base method must repeat the route decorators).',
      );
    }
    for (const route of record.socketRoutes) claim(`ws ${route.event}`, level);
    for (const route of record.httpRoutes)
      claim(`http ${httpRouteKey(route.method, route.path)}`, level);
  }

  const result: ControllerMetadata = {
    socketRoutes: [],
    httpRoutes: [],
    connectHandlers: [],
    disconnectHandlers: [],
  };
  for (const { record, level } of methods.values()) {
    const rateLimit = record.rateLimit;
    for (const route of record.socketRoutes) {
      if (winner.get(`ws ${route.event}`) !== level) continue;
      const entry: SocketRouteMetadata = {
        event: route.event,
        handler: record.name,
        middlewares: [...route.middlewares],
        excludeGlobalMiddlewares: [...route.excludeGlobalMiddlewares],
      };
      if (rateLimit !== undefined) entry.rateLimit = { ...rateLimit };
      if (route.schema !== undefined) entry.schema = route.schema;
      result.socketRoutes.push(entry);
    }
    for (const route of record.httpRoutes) {
      if (winner.get(`http ${httpRouteKey(route.method, route.path)}`) !== level) continue;
      const entry: HttpRouteMetadata = {
        method: route.method,
        path: route.path,
        handler: record.name,
        middlewares: [...route.middlewares],
        excludeGlobalMiddlewares: [...route.excludeGlobalMiddlewares],
      };
      if (rateLimit !== undefined) entry.rateLimit = { ...rateLimit };
      if (route.schemas !== undefined) entry.schemas = { ...route.schemas };
      result.httpRoutes.push(entry);
    }
    if (record.onConnect) result.connectHandlers.push(record.name);
    if (record.onDisconnect) result.disconnectHandlers.push(record.name);
  }
  return result;
}
