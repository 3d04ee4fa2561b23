import { describe, expect, it } from '@jest/globals';
import { NamespaceManager } from './namespace-manager';
import fc from 'fast-check';

describe('NamespaceManager', () => {
  it('joins and leaves the default namespace', () => {
    const nm = new NamespaceManager();
    nm.joinNamespace('a');
    nm.joinNamespace('b');
    expect(nm.getClientsInNamespace()).toEqual(['a', 'b']);
    expect(nm.getNamespacesForClient('a')).toEqual(['/']);
    nm.leaveNamespace('a');
    expect(nm.getClientsInNamespace('/')).toEqual(['b']);
    expect(nm.clientNamespaces.has('a')).toBe(false);
  });

  it('puts a client in a room of a namespace, and in that namespace', () => {
    const nm = new NamespaceManager();
    nm.joinRoom('a', 'lobby', '/chat');
    expect(nm.getClientsInRoom('lobby', '/chat')).toEqual(['a']);
    expect(nm.getClientsInRoom('lobby')).toEqual([]);
    expect(nm.isInNamespace('a', '/chat')).toBe(true);
    expect(nm.getRoomsForClient('a', '/chat')).toEqual(['lobby']);
    expect(nm.getRoomsForClient('a')).toEqual([]);
    expect(nm.isInRoom('a', 'lobby', '/chat')).toBe(true);
  });

  it('keeps rooms of the same name in different namespaces apart', () => {
    const nm = new NamespaceManager();
    nm.joinRoom('a', 'r', '/one');
    nm.joinRoom('b', 'r', '/two');
    expect(nm.getClientsInRoom('r', '/one')).toEqual(['a']);
    expect(nm.getClientsInRoom('r', '/two')).toEqual(['b']);
  });

  it('removes a room when its last member leaves, and keeps the namespace', () => {
    const nm = new NamespaceManager();
    nm.joinNamespace('a');
    nm.joinRoom('a', 'r');
    nm.joinRoom('b', 'r');
    nm.leaveRoom('a', 'r');
    expect(nm.getClientsInRoom('r')).toEqual(['b']);
    nm.leaveRoom('b', 'r');
    expect(nm.rooms.size).toBe(0);
    expect(nm.clientRooms.size).toBe(0);
    expect(nm.getClientsInNamespace()).toEqual(['a', 'b']);
  });

  it('leaveAllRooms leaves every room in every namespace but not the namespaces', () => {
    const nm = new NamespaceManager();
    nm.joinRoom('a', 'r1');
    nm.joinRoom('a', 'r2');
    nm.joinRoom('a', 'r3', '/x');
    nm.leaveAllRooms('a');
    expect(nm.getRoomsForClient('a')).toEqual([]);
    expect(nm.getRoomsForClient('a', '/x')).toEqual([]);
    expect(nm.getNamespacesForClient('a').sort()).toEqual(['/', '/x']);
    expect(nm.getStats()).toEqual({ namespaces: 2, rooms: 0, clients: 1 });
  });

  it('leaveNamespace(id, ns) leaves that namespace and its rooms only', () => {
    const nm = new NamespaceManager();
    nm.joinRoom('a', 'r', '/');
    nm.joinRoom('a', 'r', '/x');
    nm.leaveNamespace('a', '/x');
    expect(nm.getMemberships('a')).toEqual([{ namespace: '/', rooms: ['r'] }]);
    expect(nm.namespaces.has('/x')).toBe(false);
  });

  it('is idempotent: joining twice and leaving what was never joined are harmless', () => {
    const nm = new NamespaceManager();
    nm.joinRoom('a', 'r');
    nm.joinRoom('a', 'r');
    expect(nm.getClientsInRoom('r')).toEqual(['a']);
    nm.leaveRoom('a', 'nope');
    nm.leaveRoom('zzz', 'r');
    nm.leaveNamespace('zzz');
    nm.leaveAllRooms('zzz');
    expect(nm.getClientsInRoom('r')).toEqual(['a']);
  });

  it('returns copies, so callers cannot change membership by accident', () => {
    const nm = new NamespaceManager();
    nm.joinRoom('a', 'r');
    nm.getClientsInRoom('r').push('intruder');
    expect(nm.getClientsInRoom('r')).toEqual(['a']);
  });

  it('treats names like __proto__ and constructor as ordinary names', () => {
    const nm = new NamespaceManager();
    nm.joinRoom('__proto__', 'constructor', 'toString');
    expect(nm.getClientsInRoom('constructor', 'toString')).toEqual(['__proto__']);
    expect(nm.getClientsInRoom('hasOwnProperty', 'toString')).toEqual([]);
    nm.removeClient('__proto__');
    expect(nm.getStats()).toEqual({ namespaces: 0, rooms: 0, clients: 0 });
  });

  it('refuses empty or non-string names with a TypeError', () => {
    const nm = new NamespaceManager();
    expect(() => nm.joinRoom('a', '')).toThrow(/room must be a non-empty string/);
    expect(() => nm.joinRoom('', 'r')).toThrow(TypeError);
    expect(() => nm.joinNamespace('a', 42 as unknown as string)).toThrow(/got number/);
  });

  it('refuses malformed names and a join past the room cap before changing anything', () => {
    const nm = new NamespaceManager({ maxRoomsPerClient: 2, maxNameLength: 5 });
    expect(() => nm.joinRoom('a', 'x\ud800')).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_CORE_INVALID_ROOM_NAME' }),
    );
    expect(() => nm.joinRoom('a', 'r', '/toolong')).toThrow(/max_room_name_length/);
    expect(() => nm.joinNamespace('a', '/\udc00')).toThrow(TypeError);
    expect(nm.getStats()).toEqual({ namespaces: 0, rooms: 0, clients: 0 });
    nm.joinRoom('a', 'r1');
    nm.joinRoom('a', 'r2', '/x');
    nm.joinRoom('a', 'r1'); // already in: free
    expect(nm.roomCount('a')).toBe(2);
    let err: unknown;
    try {
      nm.joinRoom('a', 'r3', '/y');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RangeError);
    expect(err).toMatchObject({ code: 'PKG_ERR_CORE_TOO_MANY_ROOMS', eventCode: 'too_many_rooms' });
    expect(nm.isInNamespace('a', '/y')).toBe(false);
    nm.joinRoom('b', 'r3'); // the cap is per client
    expect(new NamespaceManager({ maxRoomsPerClient: 0 }).maxRoomsPerClient).toBe(0);
    expect(() => new NamespaceManager({ maxRoomsPerClient: -1 })).toThrow(/maxRoomsPerClient/);
  });

  it('holds nothing after 10,000 clients in rooms all disconnect', () => {
    const nm = new NamespaceManager();
    const ids: string[] = [];
    for (let i = 0; i < 10_000; i += 1) {
      const id = `c${i}`;
      ids.push(id);
      nm.joinNamespace(id);
      nm.joinRoom(id, `room-${i % 100}`);
      nm.joinRoom(id, `team-${i % 7}`, '/teams');
      if (i % 2 === 0) nm.joinRoom(id, 'even');
    }
    expect(nm.getStats()).toEqual({ namespaces: 2, rooms: 108, clients: 10_000 });
    expect(nm.getClientsInRoom('even')).toHaveLength(5_000);
    expect(nm.getClientsInNamespace('/teams')).toHaveLength(10_000);
    for (const id of ids) nm.removeClient(id);
    expect(nm.getStats()).toEqual({ namespaces: 0, rooms: 0, clients: 0 });
    expect(nm.namespaces.size).toBe(0);
    expect(nm.rooms.size).toBe(0);
    expect(nm.clientNamespaces.size).toBe(0);
    expect(nm.clientRooms.size).toBe(0);
  });
});

describe('NamespaceManager memberships under any sequence of joins and leaves', () => {
  // Clients in a single namespace share one set; a join or leave of one client must never
  // show up in another client's namespaces.
  const client = fc.constantFrom('a', 'b', 'c');
  const namespace = fc.constantFrom('/', '/chat', '/admin');
  const op = fc.oneof(
    fc.record({ kind: fc.constant('join' as const), client, namespace }),
    fc.record({ kind: fc.constant('joinRoom' as const), client, namespace }),
    fc.record({ kind: fc.constant('leave' as const), client, namespace }),
    fc.record({ kind: fc.constant('leaveAll' as const), client, namespace }),
  );

  it('matches a model of one set per client', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const nm = new NamespaceManager();
        const model = new Map<string, Set<string>>();
        for (const step of ops) {
          if (step.kind === 'join' || step.kind === 'joinRoom') {
            if (step.kind === 'join') nm.joinNamespace(step.client, step.namespace);
            else nm.joinRoom(step.client, 'room', step.namespace);
            const own = model.get(step.client) ?? new Set<string>();
            own.add(step.namespace);
            model.set(step.client, own);
          } else if (step.kind === 'leave') {
            nm.leaveNamespace(step.client, step.namespace);
            model.get(step.client)?.delete(step.namespace);
            if (model.get(step.client)?.size === 0) model.delete(step.client);
          } else {
            nm.leaveNamespace(step.client);
            model.delete(step.client);
          }
          for (const id of ['a', 'b', 'c']) {
            expect(nm.getNamespacesForClient(id)).toEqual([...(model.get(id) ?? [])]);
            expect(nm.clientNamespaces.has(id)).toBe(model.has(id));
          }
          for (const ns of ['/', '/chat', '/admin']) {
            const members = ['a', 'b', 'c'].filter((id) => model.get(id)?.has(ns) === true);
            expect([...nm.namespaceMembers(ns)].sort()).toEqual(members);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
