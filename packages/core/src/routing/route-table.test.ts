import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  RouteTable,
  extractPathParameters,
  parseRoutePath,
  plainParams,
  routeShape,
  splitRequestPath,
} from './route-table';

function table(...routes: Array<[string, string]>): RouteTable<string> {
  const t = new RouteTable<string>();
  for (const [method, path] of routes) t.add(method, path, `${method} ${path}`);
  return t;
}

describe('RouteTable', () => {
  it('matches static paths and the root', () => {
    const t = table(['GET', '/'], ['GET', '/a/b']);
    expect(t.match('GET', '/')?.value).toBe('GET /');
    expect(t.match('GET', '/a/b')?.value).toBe('GET /a/b');
    expect(t.match('GET', '/a')).toBeNull();
    expect(t.match('GET', '/a/b/c')).toBeNull();
  });

  it('extracts several parameters, percent-decoded, keeping %2F inside a value', () => {
    const t = table(['GET', '/users/{id}/posts/{postId}']);
    expect(t.match('GET', '/users/a%20b/posts/x%2Fy')).toEqual({
      value: 'GET /users/{id}/posts/{postId}',
      method: 'GET',
      params: { id: 'a b', postId: 'x/y' },
    });
    expect(t.match('GET', '/users/%E2%9C%93/posts/1')?.params).toEqual({ id: '✓', postId: '1' });
  });

  it('prefers a static segment over a parameter, and falls back to the parameter', () => {
    const t = table(['GET', '/users/{id}'], ['GET', '/users/me'], ['POST', '/users/{id}']);
    expect(t.match('GET', '/users/me')?.value).toBe('GET /users/me');
    expect(t.match('GET', '/users/42')?.value).toBe('GET /users/{id}');
    expect(t.match('POST', '/users/me')?.value).toBe('POST /users/{id}');
  });

  it('backtracks from a static branch that does not lead to a route', () => {
    const t = table(['GET', '/files/static/index'], ['GET', '/files/{name}/raw']);
    expect(t.match('GET', '/files/static/raw')?.params).toEqual({ name: 'static' });
  });

  it('ignores one trailing slash on both sides', () => {
    const t = table(['GET', '/users/'], ['GET', '/items']);
    expect(t.match('GET', '/users')?.value).toBe('GET /users/');
    expect(t.match('GET', '/users/')?.value).toBe('GET /users/');
    expect(t.match('GET', '/items/')?.value).toBe('GET /items');
    expect(t.match('GET', '/items//')).toBeNull();
  });

  it('never lets a parameter match an empty segment', () => {
    const t = table(['GET', '/a/{x}/b']);
    expect(t.match('GET', '/a//b')).toBeNull();
  });

  it('is case-sensitive and compares static segments decoded', () => {
    const t = table(['GET', '/Caf%C3%A9'], ['GET', '/lower']);
    expect(t.match('GET', '/Café')?.value).toBe('GET /Caf%C3%A9');
    expect(t.match('GET', '/Caf%C3%A9')?.value).toBe('GET /Caf%C3%A9');
    expect(t.match('GET', '/LOWER')).toBeNull();
  });

  it('answers HEAD with GET unless a HEAD route exists', () => {
    const t = table(['GET', '/a'], ['GET', '/b'], ['HEAD', '/b']);
    expect(t.match('HEAD', '/a')).toMatchObject({ value: 'GET /a', method: 'GET' });
    expect(t.match('HEAD', '/b')).toMatchObject({ value: 'HEAD /b', method: 'HEAD' });
  });

  it('lists the methods of every route matching a path', () => {
    const t = table(['GET', '/users/{id}'], ['DELETE', '/users/{id}'], ['PUT', '/users/me']);
    expect(t.allowedMethods('/users/me').sort()).toEqual(['DELETE', 'GET', 'PUT']);
    expect(t.allowedMethods('/nothing')).toEqual([]);
  });

  it('keeps a parameter named __proto__ as an own value', () => {
    const t = table(['GET', '/x/{__proto__}']);
    const params = t.match('GET', '/x/polluted')!.params;
    expect(Object.hasOwn(params, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('finds nothing but parameters on a match, whatever a name', () => {
    const t = table(['GET', '/x/{id}']);
    for (const path of ['/x/1', '/x/%31']) {
      const params = t.match('GET', path)!.params as Record<string, unknown>;
      expect(params['id']).toBe('1');
      for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf']) {
        expect(params[name]).toBeUndefined();
      }
    }
  });

  it('does not reach Object.prototype through static segments', () => {
    const t = table(['GET', '/a']);
    expect(t.match('GET', '/constructor')).toBeNull();
    expect(t.match('GET', '/__proto__')).toBeNull();
    expect(t.match('GET', '/a/toString')).toBeNull();
  });

  it('returns the existing route when the same method and shape is added again', () => {
    const t = new RouteTable<string>();
    expect(t.add('GET', '/u/{id}', 'first')).toBeUndefined();
    expect(t.add('GET', '/u/{other}/', 'second')).toBe('first');
    expect(t.add('POST', '/u/{id}', 'third')).toBeUndefined();
  });

  it('throws a URIError for a malformed percent-escape', () => {
    const t = table(['GET', '/a/{x}']);
    expect(() => t.match('GET', '/a/%E0%A4%A')).toThrow(URIError);
  });
});

describe('path helpers', () => {
  it('parses route paths into segments', () => {
    expect(parseRoutePath('/')).toEqual([]);
    expect(parseRoutePath('/a/{b}/')).toEqual([
      { kind: 'static', text: 'a' },
      { kind: 'param', name: 'b' },
    ]);
  });

  it('splits request paths into decoded segments', () => {
    expect(splitRequestPath('/')).toEqual([]);
    expect(splitRequestPath('/a%2Fb/c/')).toEqual(['a/b', 'c']);
    expect(splitRequestPath('/%zz')).toBeNull();
  });

  it('gives routes that differ only in parameter names the same shape', () => {
    expect(routeShape('/u/{id}/')).toBe(routeShape('/u/{userId}'));
    expect(routeShape('/u/{id}')).not.toBe(routeShape('/u/id'));
  });

  it('extracts path parameters like the spec method', () => {
    expect(extractPathParameters('/users/{id}/posts/{post}', '/users/7/posts/a%20b')).toEqual({
      id: '7',
      post: 'a b',
    });
    expect(extractPathParameters('/users/{id}', '/teams/7')).toEqual({});
    expect(extractPathParameters('/users/{id}', '/users/7/extra')).toEqual({});
  });
});

describe('RouteTable.match against the precedence rules, for any routes and paths', () => {
  // The reference: every declared route whose segments line up with the request (a static
  // segment equal, a parameter non-empty), ordered by its shape (at the first differing
  // position a static segment comes before a parameter); the first shape with a route for
  // the method (or GET, for HEAD) wins.
  const segment = fc.constantFrom('a', 'b', '{p}', '{q}');
  const routePath = fc.array(segment, { maxLength: 3 }).map((s) => `/${s.join('/')}`);
  const method = fc.constantFrom('GET', 'POST', 'HEAD');
  const route = fc.record({ method, path: routePath });
  const requestPath = fc
    .array(fc.constantFrom('a', 'b', 'c', ''), { maxLength: 3 })
    .map((s) => `/${s.join('/')}`);

  const shapeKey = (path: string): string =>
    parseRoutePath(path)
      .map((s) => (s.kind === 'param' ? '1' : `0${s.text}`))
      .join('/');
  const linesUp = (path: string, request: string[]): string[] | null => {
    const segments = parseRoutePath(path);
    if (segments.length !== request.length) return null;
    const values: string[] = [];
    for (let i = 0; i < segments.length; i += 1) {
      const s = segments[i]!;
      if (s.kind === 'param') {
        if (request[i] === '') return null;
        values.push(request[i]!);
      } else if (s.text !== request[i]) return null;
    }
    return values;
  };

  it('finds the route, method and parameters the rules give', () => {
    fc.assert(
      fc.property(fc.array(route, { maxLength: 8 }), requestPath, method, (routes, path, m) => {
        const table = new RouteTable<string>();
        const declared: Array<{ method: string; path: string; id: string }> = [];
        routes.forEach((r, i) => {
          if (table.add(r.method, r.path, `r${i}`) === undefined) {
            declared.push({ ...r, id: `r${i}` });
          }
        });
        const request = splitRequestPath(path)!;
        const shapes = [...new Set(declared.map((d) => shapeKey(d.path)))]
          .filter((key) =>
            declared.some((d) => shapeKey(d.path) === key && linesUp(d.path, request)),
          )
          .sort((x, y) => {
            const a = x.split('/');
            const b = y.split('/');
            for (let i = 0; i < a.length; i += 1) {
              if (a[i] !== b[i]) return a[i]![0]! < b[i]![0]! ? -1 : a[i]! < b[i]! ? -1 : 1;
            }
            return 0;
          });
        let expected: { id: string; method: string; params: Record<string, string> } | null = null;
        for (const key of shapes) {
          const at = declared.filter((d) => shapeKey(d.path) === key);
          const exact = at.find((d) => d.method === m);
          const fallback = m === 'HEAD' ? at.find((d) => d.method === 'GET') : undefined;
          const hit = exact ?? fallback;
          if (hit === undefined) continue;
          const names = parseRoutePath(hit.path).flatMap((s) =>
            s.kind === 'param' ? [s.name] : [],
          );
          const values = linesUp(hit.path, request)!;
          expected = {
            id: hit.id,
            method: hit.method,
            params: Object.fromEntries(names.map((n, i) => [n, values[i]!])),
          };
          break;
        }
        const got = table.match(m, path);
        expect(
          got === null ? null : { id: got.value, method: got.method, params: { ...got.params } },
        ).toEqual(expected);
        // The same path with its letters percent-encoded is decoded segment by segment
        // (another code path than the one for a path without escapes): the same answer.
        const encoded = path.replace(/[a-c]/g, (c) => `%6${c.charCodeAt(0) - 96}`);
        const again = table.match(m, encoded);
        expect(
          again === null
            ? null
            : { id: again.value, method: again.method, params: { ...again.params } },
        ).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps a parameter named __proto__ as a plain key, in the table and in the public copy', () => {
    const table = new RouteTable<string>();
    table.add('GET', '/x/{__proto__}', 'proto');
    const params = table.match('GET', '/x/polluted')?.params ?? {};
    // Nothing reachable through the prototype: it has no keys and no prototype itself.
    const prototype = Object.getPrototypeOf(params) as object;
    expect(Reflect.ownKeys(prototype)).toEqual([]);
    expect(Object.getPrototypeOf(prototype)).toBeNull();
    expect(Object.keys(params)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(params, '__proto__')?.value).toBe('polluted');
    const copy = plainParams(params);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toBe('polluted');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
