// client.presence() with the real @pkg/core Server tracking presence: the state on join,
// diffs of joins and leaves, two connections of one user as one key, a meta update, a room
// over the list bound (counts only), and the view after a server restart.
import { afterEach, describe, expect, it } from '@jest/globals';
import { NullLogger, RoomsController, Server, ServerConfig } from '@pkg/core';
import type { Client, Presence } from '../src/index';
import { cleanup, makeClient, next } from './helpers';

interface ServerEvents {
  $presence: (meta: { name: string }) => void;
}
type PresenceClient = Client<Record<string, (data: unknown) => unknown>, ServerEvents>;

const USERS: Record<string, string> = { 'alice-token': 'Alice', 'bob-token': 'Bob' };
const servers: Server[] = [];

afterEach(async () => {
  await cleanup();
  for (const s of servers.splice(0)) await s.close();
});

/** A server with presence in every room; a token's user is the identity, its name the meta. */
async function start(port = 0, config: Record<string, unknown> = {}): Promise<Server> {
  const server = new Server(
    new ServerConfig({
      host: '127.0.0.1',
      port,
      heartbeat_interval: 0,
      shutdown_delay: 0,
      presence: [{ match: '*' }],
      presence_interval: 20,
      ...config,
    }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  const names = new Map<string, string>();
  server.addAuthHandler(({ clientId, auth }) => {
    const name = USERS[auth ?? ''];
    if (name === undefined) return true;
    names.set(clientId, name);
    return { identity: name.toLowerCase() };
  });
  server.onPresence(({ clientId }) => ({ name: names.get(clientId) ?? 'guest' }));
  server.registerController(new RoomsController());
  await server.run();
  servers.push(server);
  return server;
}

function client(server: Server, token?: string): PresenceClient {
  return makeClient<Record<string, (data: unknown) => unknown>, ServerEvents>(
    `ws://127.0.0.1:${server.getPort()}`,
    { recovery: false, ...(token ? { auth: token } : {}) },
  );
}

/** Resolves once the view's list, read by `read`, equals `expected` (checked on every sync). */
function until<T>(
  view: Presence<{ name: string }>,
  read: (view: Presence<{ name: string }>) => T,
  expected: T,
): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (JSON.stringify(read(view)) === JSON.stringify(expected)) {
        view.off('sync', check);
        resolve();
      }
    };
    view.on('sync', check);
    check();
  });
}

const byName = (view: Presence<{ name: string }>): Array<[string, number]> =>
  view
    .list((key, { metas }) => [`${key}:${metas[0]?.name}`, metas.length] as [string, number])
    .sort();

describe('client.presence() with the real server', () => {
  it('follows joins and leaves; two tabs of one user are one key with two metas', async () => {
    const server = await start();
    const alice = client(server, 'alice-token');
    await alice.connect();
    await alice.joinRoom('lobby');
    const view = alice.presence('lobby');
    await until(view, byName, [['alice:Alice', 1]]);
    const joins: string[] = [];
    const leaves: string[] = [];
    view.on('join', (key, current) => joins.push(`${key}${current ? '+' : ''}`));
    view.on('leave', (key, current) => leaves.push(`${key}${current.metas.length ? '-' : ''}`));

    const bob = client(server, 'bob-token');
    await bob.connect();
    await bob.joinRoom('lobby');
    const tab = client(server, 'alice-token');
    await tab.connect();
    await tab.joinRoom('lobby');
    await until(view, byName, [
      ['alice:Alice', 2],
      ['bob:Bob', 1],
    ]);
    // Bob's own view, from the state it got on joining, is the same.
    await until(bob.presence('lobby'), byName, byName(view));

    tab.disconnect();
    await until(view, byName, [
      ['alice:Alice', 1],
      ['bob:Bob', 1],
    ]);
    await bob.leaveRoom('lobby');
    await until(view, byName, [['alice:Alice', 1]]);
    expect(joins.sort()).toEqual(['alice+', 'bob']);
    expect(leaves.sort()).toEqual(['alice-', 'bob']);
    expect(view.stats()).toEqual({ connections: 1, keys: 1 });
    expect(await server.presenceStats('lobby')).toEqual({ connections: 1, keys: 1 });
  });

  it('shows a meta update without the key leaving', async () => {
    const server = await start();
    const alice = client(server, 'alice-token');
    await alice.connect();
    await alice.joinRoom('lobby');
    const view = alice.presence('lobby');
    await until(view, byName, [['alice:Alice', 1]]);
    const leftKeys: string[] = [];
    view.on('leave', (key, current) => {
      if (current.metas.length === 0) leftKeys.push(key);
    });
    expect(server.updatePresence(alice.id!, 'lobby', { name: 'Alice (away)' })).toBe(true);
    await until(view, byName, [['alice:Alice (away)', 1]]);
    expect(leftKeys).toEqual([]);
  });

  it('exposes the counts of a room over the list bound', async () => {
    const server = await start(0, { presence_max_list: 1 });
    const alice = client(server, 'alice-token');
    const bob = client(server, 'bob-token');
    await alice.connect();
    await bob.connect();
    await alice.joinRoom('hall');
    await bob.joinRoom('hall');
    const view = bob.presence('hall');
    await until(view, (v) => [v.statsOnly, v.stats(), v.list()], [
      true,
      { connections: 2, keys: 2 },
      [],
    ]);
  });

  it('after a server restart, takes the state of the new server and reports the difference', async () => {
    let server = await start();
    const port = server.getPort();
    const alice = client(server, 'alice-token');
    const bob = client(server, 'bob-token');
    await alice.connect();
    await bob.connect();
    await alice.joinRoom('lobby');
    await bob.joinRoom('lobby');
    const view = alice.presence('lobby');
    await until(view, byName, [
      ['alice:Alice', 1],
      ['bob:Bob', 1],
    ]);
    const aliceBefore = alice.id;
    const events: string[] = [];
    view.on('join', (key) => events.push(`join ${key}`));
    view.on('leave', (key) => events.push(`leave ${key}`));

    const lost = next(alice, 'disconnect');
    await servers.splice(servers.indexOf(server), 1)[0]!.close();
    await lost;
    bob.disconnect(); // Bob does not come back
    expect(events).toEqual([]);
    server = await start(port);
    // Alice reconnects on her own and joins the lobby again; the new state has no Bob.
    await until(view, byName, [['alice:Alice', 1]]);
    expect(view.synced).toBe(true);
    expect(view.get('alice')!.metas.map((m) => m.clientId)).toEqual([alice.id]);
    expect(alice.id).not.toBe(aliceBefore);
    expect(events.sort()).toEqual(['join alice', 'leave alice', 'leave bob']);
  });
});
