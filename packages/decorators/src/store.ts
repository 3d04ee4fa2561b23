import type { RateLimitRule } from '@pkg/http';
import { decError } from './errors';
import type { AnySchema, HttpMethod, HttpMiddleware, HttpSchemas, WsMiddleware } from './types';
import { methodName, quoteMethod } from './validate';

// Where the decorators write. Compilers give every decorated class a metadata object
// (`context.metadata`, later `Class[Symbol.metadata]`) whose prototype is the base class's
// metadata object. Each decorator writes only to the class's OWN entry under
// kControllerMetadata, creating it when `Object.hasOwn` says it is missing (writing through
// the prototype would change the base class). The reader walks the class chain itself.

// Node 20 has no Symbol.metadata; TypeScript's emitted code records metadata only when it
// exists, and esbuild falls back to the same registered symbol.
(Symbol as unknown as { metadata?: symbol }).metadata ??= Symbol.for('Symbol.metadata');

/**
 * The key of this package's entry in a class's metadata object. A registered symbol, so the
 * ESM and CJS builds (or two copies of the package) read and write the same entry. The
 * suffix is the version of the record format, not of the package.
 */
export const kControllerMetadata: unique symbol = Symbol.for('@pkg/decorators.controller@1');

export interface SocketRouteRecord {
  event: string;
  middlewares: WsMiddleware[];
  excludeGlobalMiddlewares: WsMiddleware[];
  schema?: AnySchema;
}

export interface HttpRouteRecord {
  method: HttpMethod;
  path: string;
  middlewares: HttpMiddleware[];
  excludeGlobalMiddlewares: HttpMiddleware[];
  schemas?: HttpSchemas;
}

/** What the decorators on one method declared, in source order. */
export interface MethodRecord {
  readonly name: string | symbol;
  readonly socketRoutes: SocketRouteRecord[];
  readonly httpRoutes: HttpRouteRecord[];
  onConnect: boolean;
  onDisconnect: boolean;
  rateLimit: RateLimitRule | undefined;
}

/** One class's own declarations, methods in the order they were first decorated. */
export interface ClassRecord {
  readonly methods: Map<string | symbol, MethodRecord>;
}

/** Where a decorator is applied: its class record, its method record, and a phrase for messages. */
export interface DecorationSite {
  readonly classRecord: ClassRecord;
  readonly method: MethodRecord;
  /** For example `@SocketOn() on method "onChat"`. */
  readonly site: string;
}

interface StandardContext {
  kind: string;
  name: string | symbol | undefined;
  static?: boolean;
  private?: boolean;
  metadata?: Record<PropertyKey, unknown> | null;
}

function legacyClassName(target: unknown): string {
  const ctor =
    typeof target === 'function'
      ? target
      : typeof target === 'object' && target !== null
        ? (target as { constructor?: unknown }).constructor
        : undefined;
  return typeof ctor === 'function' && ctor.name ? ctor.name : '(anonymous class)';
}

/**
 * Checks how a method decorator was called and returns the records it should write to.
 * Throws when called with the legacy experimentalDecorators arguments, on anything that is
 * not a public instance method, and when the compiler provides no metadata object.
 */
export function openMethodRecord(
  decorator: string,
  target: unknown,
  context: unknown,
): DecorationSite {
  if (
    typeof context !== 'object' ||
    context === null ||
    typeof (context as { kind?: unknown }).kind !== 'string'
  ) {
    const key =
      typeof context === 'string' || typeof context === 'symbol' ? methodName(context) : '?';
    throw decError(
      'PKG_ERR_DEC_LEGACY_DECORATORS',
      `@${decorator}() on ${legacyClassName(target)}.${key} was called with the legacy ` +
        '"experimentalDecorators" arguments. @pkg/decorators uses standard decorators: remove ' +
        '"experimentalDecorators" (and "emitDecoratorMetadata") from compilerOptions in your ' +
        'tsconfig.json (TypeScript 5.2 or later). With Babel, use ' +
        '@babel/plugin-proposal-decorators with { version: "2023-11" }.',
    );
  }
  const ctx = context as StandardContext;
  const name = ctx.name === undefined ? '(anonymous)' : quoteMethod(ctx.name);
  if (ctx.kind !== 'method') {
    throw decError(
      'PKG_ERR_DEC_INVALID_TARGET',
      `@${decorator}() can only decorate methods, but was applied to the ${ctx.kind} ${name}. ` +
        'Put it on a method of the controller class.',
    );
  }
  if (ctx.static === true) {
    throw decError(
      'PKG_ERR_DEC_INVALID_TARGET',
      `@${decorator}() was applied to the static method ${name}. ` +
        'Handlers are called on the controller instance: remove "static".',
    );
  }
  if (ctx.private === true) {
    throw decError(
      'PKG_ERR_DEC_INVALID_TARGET',
      `@${decorator}() was applied to the private method ${name}. ` +
        'The server calls handlers by name, which a #private method cannot be; ' +
        'use a regular method (TypeScript\'s "private" keyword is fine).',
    );
  }
  const site = `@${decorator}() on method ${name}`;
  const metadata = ctx.metadata;
  if (typeof metadata !== 'object' || metadata === null) {
    throw decError(
      'PKG_ERR_DEC_METADATA_UNAVAILABLE',
      `${site}: the decorator context has no metadata object, so nothing could be recorded. ` +
        'Compile with TypeScript 5.2 or later or esbuild 0.21 or later, and import ' +
        '@pkg/decorators before defining the class (importing it defines Symbol.metadata).',
    );
  }
  if (!Object.hasOwn(metadata, kControllerMetadata)) {
    const fresh: ClassRecord = { methods: new Map() };
    metadata[kControllerMetadata] = fresh;
  }
  const classRecord = metadata[kControllerMetadata] as ClassRecord;
  const key = ctx.name as string | symbol;
  let method = classRecord.methods.get(key);
  if (method === undefined) {
    method = {
      name: key,
      socketRoutes: [],
      httpRoutes: [],
      onConnect: false,
      onDisconnect: false,
      rateLimit: undefined,
    };
    classRecord.methods.set(key, method);
  }
  return { classRecord, method, site };
}

/** The class's own record, if any of this package's decorators was used in its body. */
export function readOwnRecord(ctor: object): ClassRecord | undefined {
  const key = Symbol.metadata;
  if (!Object.hasOwn(ctor, key)) return undefined;
  const metadata: unknown = (ctor as Record<symbol, unknown>)[key];
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  if (!Object.hasOwn(metadata, kControllerMetadata)) return undefined;
  return (metadata as Record<symbol, unknown>)[kControllerMetadata] as ClassRecord;
}
