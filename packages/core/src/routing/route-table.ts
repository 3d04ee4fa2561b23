/**
 * The HTTP route table: a tree of path segments, matched segment by segment.
 *
 * Rules (documented in the README):
 * - Paths are case-sensitive and compared after percent-decoding each segment on its own,
 *   so `%2F` inside a parameter is part of its value and never splits a segment.
 * - A static segment wins over a `{param}` segment at the same position (`/users/me` beats
 *   `/users/{id}`); when the static branch has no route for the method, the parameter
 *   branch is tried (`POST /users/me` can reach `POST /users/{id}`).
 * - Trailing slash: one trailing slash is ignored on both sides, so `/users/` and `/users`
 *   are the same route and the same request (the root `/` stays `/`). Inner empty segments
 *   (`/a//b`) are kept and never match a parameter.
 * - A parameter matches one non-empty segment; parameter values are percent-decoded.
 */
const PARAM = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

interface Node<R> {
  readonly statics: Map<string, Node<R>>;
  param: Node<R> | null;
  /** Routes ending at this node, by method. */
  readonly routes: Map<string, Leaf<R>>;
}

interface Leaf<R> {
  readonly value: R;
  /** The method the route was declared for. */
  readonly method: string;
  readonly paramNames: readonly string[];
}

/** A successful lookup. */
export interface RouteTableMatch<R> {
  readonly value: R;
  /** The method of the route that matched (GET for a HEAD request answered by GET). */
  readonly method: string;
  /** Parameter values, percent-decoded, in an object with no prototype-reachable keys. */
  readonly params: Record<string, string>;
}

/** A segment of a declared path. */
export type PathSegment =
  | { readonly kind: 'static'; readonly text: string }
  | { readonly kind: 'param'; readonly name: string };

function decodeSegment(segment: string): string | null {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function trimTrailingSlash(path: string): string {
  return path.length > 1 && path.charCodeAt(path.length - 1) === 47 /* / */
    ? path.slice(0, -1)
    : path;
}

/** Splits a declared path like `/users/{id}` into segments (statics decoded). */
export function parseRoutePath(path: string): PathSegment[] {
  const trimmed = trimTrailingSlash(path);
  if (trimmed === '/') return [];
  return trimmed
    .slice(1)
    .split('/')
    .map((segment): PathSegment => {
      const name = PARAM.exec(segment)?.[1];
      if (name !== undefined) return { kind: 'param', name };
      return { kind: 'static', text: decodeSegment(segment) ?? segment };
    });
}

/**
 * Splits a request path (as sent, percent-encoded) into decoded segments; `null` when a
 * segment has a malformed percent-escape.
 */
export function splitRequestPath(path: string): string[] | null {
  const trimmed = trimTrailingSlash(path);
  if (trimmed === '/' || trimmed === '') return [];
  const raw = (trimmed.startsWith('/') ? trimmed.slice(1) : trimmed).split('/');
  const out: string[] = [];
  for (const segment of raw) {
    const decoded = decodeSegment(segment);
    if (decoded === null) return null;
    out.push(decoded);
  }
  return out;
}

/** The shape of a path for duplicate detection: parameter names do not matter. */
export function routeShape(path: string): string {
  const segments = parseRoutePath(path);
  return `/${segments.map((s) => (s.kind === 'param' ? '{}' : encodeURIComponent(s.text))).join('/')}`;
}

/**
 * Extracts the values of the `{name}` segments of `routePath` from `requestPath`. Returns
 * an empty object when the paths do not line up.
 */
export function extractPathParameters(
  routePath: string,
  requestPath: string,
): Record<string, string> {
  const route = parseRoutePath(routePath);
  const request = splitRequestPath(requestPath);
  if (request === null || request.length !== route.length) return {};
  const entries: Array<[string, string]> = [];
  for (let i = 0; i < route.length; i += 1) {
    const segment = route[i]!;
    const value = request[i]!;
    if (segment.kind === 'param') {
      if (value === '') return {};
      entries.push([segment.name, value]);
    } else if (segment.text !== value) {
      return {};
    }
  }
  return Object.fromEntries(entries);
}

const newNode = <R>(): Node<R> => ({ statics: new Map(), param: null, routes: new Map() });

/** The key of a parameterless path in the exact-match index, or null when it cannot have one. */
function exactKey(segments: readonly string[]): string | null {
  for (const segment of segments) if (segment.includes('/') || segment.includes('%')) return null;
  return `/${segments.join('/')}`;
}

/**
 * The prototype of every parameter object: no keys, and no prototype of its own, so that
 * nothing but a parameter is found on one. (An object made with `Object.create(null)` is
 * kept by V8 as a dictionary, slower to fill and to list than one with this prototype.)
 */
const NO_KEYS: object = Object.freeze(Object.create(null) as object);

/**
 * The parameters of a match without any (a static route): one frozen object for all. The
 * table's parameter objects have nothing reachable through their prototype and are shared
 * or handed to the request (which copies them); {@link plainParams} makes the copy that
 * public callers get.
 */
export const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze(
  Object.create(null) as Record<string, string>,
);

/**
 * A plain, writable copy of a match's parameters. `Object.fromEntries` defines each key (as
 * in extractPathParameters), so a `__proto__` name stays an own key.
 */
export function plainParams(params: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(params));
}

export class RouteTable<R> {
  readonly #root: Node<R> = newNode();
  /**
   * Routes without parameters by their path: a request path without percent-escapes finds
   * them with one lookup instead of a walk (a static route always wins over a parameter).
   */
  readonly #exact = new Map<string, Map<string, Leaf<R>>>();

  /** Adds a route; returns the value already stored for the same method and shape, if any. */
  add(method: string, path: string, value: R): R | undefined {
    let node = this.#root;
    const paramNames: string[] = [];
    for (const segment of parseRoutePath(path)) {
      if (segment.kind === 'param') {
        paramNames.push(segment.name);
        node.param ??= newNode();
        node = node.param;
      } else {
        let next = node.statics.get(segment.text);
        if (!next) {
          next = newNode();
          node.statics.set(segment.text, next);
        }
        node = next;
      }
    }
    const existing = node.routes.get(method);
    if (existing) return existing.value;
    const leaf: Leaf<R> = { value, method, paramNames };
    node.routes.set(method, leaf);
    if (paramNames.length === 0) {
      const key = exactKey(
        parseRoutePath(path).map((segment) => (segment.kind === 'static' ? segment.text : '')),
      );
      if (key !== null) {
        let byMethod = this.#exact.get(key);
        if (!byMethod) {
          byMethod = new Map();
          this.#exact.set(key, byMethod);
        }
        byMethod.set(method, leaf);
      }
    }
    return undefined;
  }

  /**
   * Finds the route for a method and a request path. HEAD falls back to GET. Returns `null`
   * when nothing matches, and throws a `URIError` for a malformed percent-escape.
   */
  match(method: string, path: string): RouteTableMatch<R> | null {
    const escaped = path.includes('%');
    const trimmed = trimTrailingSlash(path);
    if (!escaped && path.charCodeAt(0) === 47 /* / */) {
      // One lookup finds a static route.
      const leaf = this.#exact.get(trimmed)?.get(method);
      if (leaf !== undefined) return { value: leaf.value, method, params: NO_PARAMS };
    }
    // A malformed escape anywhere is refused, whether or not the walk would reach it.
    if (escaped) this.#segments(path);
    // The segments are read off the path in place (`/` and `` have none).
    const start =
      trimmed === '/' || trimmed === '' ? trimmed.length + 1 : trimmed.charCodeAt(0) === 47 ? 1 : 0;
    const values: string[] = [];
    const leaf = this.#find(this.#root, trimmed, start, escaped, values, method);
    if (leaf === null) return null;
    // Nothing reachable through the prototype: a parameter may be named `__proto__` or
    // `constructor`, which stays a plain own key.
    const params = Object.create(NO_KEYS) as Record<string, string>;
    const names = leaf.paramNames;
    for (let i = 0; i < names.length; i += 1) params[names[i]!] = values[i]!;
    return { value: leaf.value, method: leaf.method, params };
  }

  /**
   * The route of the first node, in match order (a static segment before a parameter,
   * backtracking), that ends the path and has a route for `method` (or GET for HEAD, which
   * the route's own `method` then says); `values` then holds the parameter values along the
   * way. The segment starting at `start` runs to the next `/` (percent-decoded when the path
   * is `escaped`), and `start` past the end means every segment is matched: no array of
   * segments, no generator, nothing per level but the segment itself, since this runs for
   * every request to a route with parameters.
   */
  #find(
    node: Node<R>,
    path: string,
    start: number,
    escaped: boolean,
    values: string[],
    method: string,
  ): Leaf<R> | null {
    if (start > path.length) {
      const routes = node.routes;
      return routes.get(method) ?? (method === 'HEAD' ? routes.get('GET') : undefined) ?? null;
    }
    let end = path.indexOf('/', start);
    if (end === -1) end = path.length;
    const raw = path.slice(start, end);
    // Checked by match(): a segment here always decodes.
    const segment = escaped ? (decodeSegment(raw) ?? raw) : raw;
    const next = node.statics.get(segment);
    if (next !== undefined) {
      const found = this.#find(next, path, end + 1, escaped, values, method);
      if (found !== null) return found;
    }
    if (node.param !== null && segment !== '') {
      values.push(segment);
      const found = this.#find(node.param, path, end + 1, escaped, values, method);
      if (found !== null) return found;
      values.pop();
    }
    return null;
  }

  /** Methods declared for any route matching the path (empty when the path is unknown). */
  allowedMethods(path: string): string[] {
    const segments = this.#segments(path);
    const methods = new Set<string>();
    for (const { node } of this.#walk(this.#root, segments, 0, [])) {
      for (const method of node.routes.keys()) methods.add(method);
    }
    return [...methods];
  }

  #segments(path: string): string[] {
    const segments = splitRequestPath(path);
    if (segments === null)
      throw new URIError(`Malformed percent-escape in path ${JSON.stringify(path)}`);
    return segments;
  }

  *#walk(
    node: Node<R>,
    segments: readonly string[],
    index: number,
    values: readonly string[],
  ): Generator<{ node: Node<R>; values: readonly string[] }> {
    if (index === segments.length) {
      if (node.routes.size > 0) yield { node, values };
      return;
    }
    const segment = segments[index]!;
    const next = node.statics.get(segment);
    if (next) yield* this.#walk(next, segments, index + 1, values);
    if (node.param && segment !== '') {
      yield* this.#walk(node.param, segments, index + 1, [...values, segment]);
    }
  }
}
