// client.presence() against a scripted server: the real @pkg/core Server of v1-server.ts,
// with the test writing `$presence` / `$presence_diff` frames to the client's socket as a
// presence-tracking server would, including the early, repeated, malformed and out-of-order
// ones a client must survive.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Client, Presence, PresenceEntryOf } from '../src/index';
import { Recorder, cleanup, makeClient, next } from './helpers';
import { V1Server } from './v1-server';

interface ServerEvents {
  $presence: (meta: { name: string }) => void;
  'chat.said': (data: { text: string }) => void;
}

const servers: V1Server[] = [];
afterEach(async () => {
  await cleanup();
  for (const s of servers.splice(0)) await s.close();
});

const meta = (clientId: string, name: string, joinedAt = 1): Record<string, unknown> => ({
  clientId,
  joinedAt,
  name,
});

async function setUp(options: { recovery?: boolean } = {}): Promise<{
  server: V1Server;
  client: Client<Record<string, (data: unknown) => unknown>, ServerEvents>;
  send: (event: string, data: unknown) => Promise<void>;
}> {
  const server = await V1Server.start();
  servers.push(server);
  const client = makeClient<Record<string, (data: unknown) => unknown>, ServerEvents>(server.url, {
    recovery: options.recovery ?? false,
  });
  await client.connect();
  /** Writes a frame to the client, then waits for a round trip so that it was handled. */
  const send = async (event: string, data: unknown): Promise<void> => {
    const ws = server.server.clients.get(client.id!)!;
    ws.socket.send(typeof data === 'string' ? data : JSON.stringify({ event, data }));
    await client.emitWithAck('nothing', {}).catch(() => undefined);
  };
  return { server, client, send };
}

type Event = [string, ...unknown[]];

function record(view: Presence<{ name: string }>): Recorder<Event> {
  const events = new Recorder<Event>();
  view.on('join', (key, current, joined) => events.push(['join', key, current, joined]));
  view.on('leave', (key, current, left) => events.push(['leave', key, current, left]));
  view.on('sync', () => events.push(['sync']));
  return events;
}

const names = (view: Presence<{ name: string }>): Array<[string, string[]]> =>
  view.list((key, entry) => [key, entry.metas.map((m) => m.name)]);

describe('client.presence()', () => {
  it('takes the state, then applies joins and leaves, with Phoenix-style events', async () => {
    const { client, send } = await setUp();
    const view = client.presence('lobby');
    expect(client.presence('lobby')).toBe(view);
    expect(client.presence('lobby', '/other')).not.toBe(view);
    expect(view.synced).toBe(false);
    expect(view.stats()).toBeUndefined();
    const events = record(view);

    await send('$presence', {
      room: 'lobby',
      namespace: '/',
      state: { ada: { metas: [meta('a1', 'Ada')] } },
    });
    expect(view.synced).toBe(true);
    expect(events.items).toEqual([
      ['join', 'ada', undefined, { metas: [meta('a1', 'Ada')] }],
      ['sync'],
    ]);
    events.items.length = 0;

    // Bob joins with two tabs, Ada opens a second one.
    await send('$presence_diff', {
      room: 'lobby',
      namespace: '/',
      joins: {
        bob: { metas: [meta('b1', 'Bob'), meta('b2', 'Bob')] },
        ada: { metas: [meta('a2', 'Ada')] },
      },
      leaves: {},
    });
    expect(names(view)).toEqual([
      ['ada', ['Ada', 'Ada']],
      ['bob', ['Bob', 'Bob']],
    ]);
    expect(view.stats()).toEqual({ connections: 4, keys: 2 });
    expect(events.items).toEqual([
      ['join', 'bob', undefined, { metas: [meta('b1', 'Bob'), meta('b2', 'Bob')] }],
      ['join', 'ada', { metas: [meta('a1', 'Ada')] }, { metas: [meta('a2', 'Ada')] }],
      ['sync'],
    ]);
    events.items.length = 0;

    // One of Bob's tabs closes: a meta leave, not a user leave. Then Ada leaves entirely.
    await send('$presence_diff', {
      room: 'lobby',
      namespace: '/',
      joins: {},
      leaves: { bob: { metas: [meta('b1', 'Bob')] } },
    });
    await send('$presence_diff', {
      room: 'lobby',
      namespace: '/',
      joins: {},
      leaves: { ada: { metas: [meta('a1', 'Ada'), meta('a2', 'Ada')] } },
    });
    expect(events.items).toEqual([
      ['leave', 'bob', { metas: [meta('b2', 'Bob')] }, { metas: [meta('b1', 'Bob')] }],
      ['sync'],
      ['leave', 'ada', { metas: [] }, { metas: [meta('a1', 'Ada'), meta('a2', 'Ada')] }],
      ['sync'],
    ]);
    expect(view.list()).toEqual([{ key: 'bob', metas: [meta('b2', 'Bob')] }]);
    expect(view.get('ada')).toBeUndefined();
    expect(view.get('bob')).toEqual({ metas: [meta('b2', 'Bob')] });
  });

  it('buffers diffs that arrive before the state and applies them after it', async () => {
    const { client, send } = await setUp();
    const view = client.presence('lobby');
    const events = record(view);
    await send('$presence_diff', {
      room: 'lobby',
      namespace: '/',
      joins: { cy: { metas: [meta('c1', 'Cy')] } },
      leaves: {},
    });
    await send('$presence_diff', {
      room: 'lobby',
      namespace: '/',
      joins: {},
      leaves: { ada: { metas: [meta('a1', 'Ada')] } },
    });
    expect(events.items).toEqual([]);
    expect(view.list()).toEqual([]);

    await send('$presence', {
      room: 'lobby',
      namespace: '/',
      state: { ada: { metas: [meta('a1', 'Ada')] }, bob: { metas: [meta('b1', 'Bob')] } },
    });
    expect(names(view)).toEqual([
      ['bob', ['Bob']],
      ['cy', ['Cy']],
    ]);
    expect(events.items.map((e) => e.slice(0, 2))).toEqual([
      ['join', 'ada'],
      ['join', 'bob'],
      ['join', 'cy'],
      ['leave', 'ada'],
      ['sync'],
    ]);
  });

  it('keeps the key through a meta update (leave of the old meta, join of the new one)', async () => {
    const { client, send } = await setUp();
    const view = client.presence('lobby');
    await send('$presence', {
      room: 'lobby',
      namespace: '/',
      state: { ada: { metas: [meta('a1', 'Ada')] } },
    });
    const events = record(view);
    await send('$presence_diff', {
      room: 'lobby',
      namespace: '/',
      joins: { ada: { metas: [meta('a1', 'Ada (away)')] } },
      leaves: { ada: { metas: [meta('a1', 'Ada')] } },
    });
    expect(names(view)).toEqual([['ada', ['Ada (away)']]]);
    expect(events.items).toEqual([
      ['join', 'ada', { metas: [meta('a1', 'Ada')] }, { metas: [meta('a1', 'Ada (away)')] }],
      ['leave', 'ada', { metas: [meta('a1', 'Ada (away)')] }, { metas: [meta('a1', 'Ada')] }],
      ['sync'],
    ]);
  });

  it('knows a room whose state arrived before the view was asked for, and a repeated state or join changes nothing', async () => {
    const { client, send } = await setUp();
    const state = { room: 'lobby', namespace: '/', state: { ada: { metas: [meta('a1', 'Ada')] } } };
    await send('$presence', state);
    const view = client.presence('lobby');
    expect(view.synced).toBe(true);
    expect(names(view)).toEqual([['ada', ['Ada']]]);
    const events = record(view);
    await send('$presence', state);
    // The same join twice (a repeated diff): nothing joined.
    await send('$presence_diff', { room: 'lobby', namespace: '/', joins: state.state, leaves: {} });
    expect(events.items).toEqual([['sync'], ['sync']]);
    expect(names(view)).toEqual([['ada', ['Ada']]]);
  });

  it('after a reconnect takes the state again and reports the joins and leaves of the difference', async () => {
    const { server, client, send } = await setUp();
    const view = client.presence('lobby');
    await send('$presence', {
      room: 'lobby',
      namespace: '/',
      state: { ada: { metas: [meta('a1', 'Ada')] }, bob: { metas: [meta('b1', 'Bob')] } },
    });
    const events = record(view);
    const back = next(client, 'connect');
    server.dropTcp(client.id!);
    await back;
    // Until the new state comes, the last known view stays; a diff meanwhile waits for it.
    expect(names(view)).toEqual([
      ['ada', ['Ada']],
      ['bob', ['Bob']],
    ]);
    expect(view.synced).toBe(false);
    await send('$presence_diff', {
      room: 'lobby',
      namespace: '/',
      joins: { dee: { metas: [meta('d1', 'Dee')] } },
      leaves: {},
    });
    await send('$presence', {
      room: 'lobby',
      namespace: '/',
      state: { bob: { metas: [meta('b1', 'Bob')] }, cy: { metas: [meta('c1', 'Cy')] } },
    });
    expect(events.items).toEqual([
      ['join', 'cy', undefined, { metas: [meta('c1', 'Cy')] }],
      ['leave', 'ada', { metas: [] }, { metas: [meta('a1', 'Ada')] }],
      ['join', 'dee', undefined, { metas: [meta('d1', 'Dee')] }],
      ['sync'],
    ]);
    expect(names(view).map(([key]) => key)).toEqual(['bob', 'cy', 'dee']);
  });

  it('exposes a room reported by counts only, and ignores diffs for it', async () => {
    const { client, send } = await setUp();
    const view = client.presence('stadium');
    await send('$presence', {
      room: 'stadium',
      namespace: '/',
      state: { ada: { metas: [meta('a1', 'Ada')] } },
    });
    const events = record(view);
    await send('$presence', {
      room: 'stadium',
      namespace: '/',
      stats: { connections: 5000, keys: 4200 },
    });
    expect(view.statsOnly).toBe(true);
    expect(view.stats()).toEqual({ connections: 5000, keys: 4200 });
    expect(view.list()).toEqual([]);
    await send('$presence_diff', {
      room: 'stadium',
      namespace: '/',
      joins: { bob: { metas: [meta('b1', 'Bob')] } },
      leaves: {},
    });
    expect(view.list()).toEqual([]);
    expect(events.items).toEqual([['sync']]);
  });

  it('survives malformed frames: bad rooms, bad metas, odd bytes', async () => {
    const { client, send } = await setUp();
    const view = client.presence('lobby');
    const errors = new Recorder<unknown>();
    client.on('error', errors.push);
    const events = record(view);
    await send('$presence', 'not json {');
    await send('$presence', { room: 42, state: {} });
    await send('$presence', { room: 'lobby', namespace: 'no-slash', state: {} });
    await send('$presence', { room: 'lobby', namespace: '/', state: 'everyone' });
    await send('$presence_diff', null);
    expect(events.items).toEqual([]);
    expect(view.synced).toBe(false);
    await send('$presence', {
      room: 'lobby',
      namespace: '/',
      state: {
        ada: { metas: [meta('a1', 'Ada'), { joinedAt: 3 }, 'x'] },
        bob: { metas: null },
        ['__proto__']: { metas: [meta('p1', '\u0000\ud800')] },
      },
    });
    expect(names(view)).toEqual([
      ['ada', ['Ada']],
      ['__proto__', ['\u0000\ud800']],
    ]);
    expect(errors.items).toEqual([]);
  });

  it('stops listening on close(); the next view of the room starts with the same state', async () => {
    const { client, send } = await setUp();
    const view = client.presence('lobby');
    const events = record(view);
    view.close();
    expect(view.closed).toBe(true);
    await send('$presence', {
      room: 'lobby',
      namespace: '/',
      state: { ada: { metas: [meta('a1', 'Ada')] } },
    });
    expect(events.items).toEqual([]);
    const again = client.presence('lobby');
    expect(again).not.toBe(view);
    expect(names(again)).toEqual([['ada', ['Ada']]]);
    const syncs = new Recorder<string>();
    const onSync = (): void => syncs.push('sync');
    again.on('sync', onSync).off('sync', onSync);
    await send('$presence', { room: 'lobby', namespace: '/', state: {} });
    expect(syncs.items).toEqual([]);
    expect(() => again.on('joined' as 'join', () => undefined)).toThrow(TypeError);
    expect(() => client.presence('')).toThrow(TypeError);
  });

  it('empties the view when the client leaves the room', async () => {
    const { client, send } = await setUp();
    await client.joinRoom('lobby');
    const view = client.presence('lobby');
    await send('$presence', {
      room: 'lobby',
      namespace: '/',
      state: { ada: { metas: [meta('a1', 'Ada')] } },
    });
    const events = record(view);
    await client.leaveRoom('lobby');
    expect(view.list()).toEqual([]);
    expect(view.synced).toBe(false);
    expect(events.items).toEqual([
      ['leave', 'ada', { metas: [] }, { metas: [meta('a1', 'Ada')] }],
      ['sync'],
    ]);
  });
});

// Types only: the meta members come from the `$presence` member of the server's map.
export function typeChecks(
  client: Client<Record<string, (data: unknown) => unknown>, ServerEvents>,
): void {
  const view = client.presence('lobby');
  const name: string | undefined = view.list()[0]?.metas[0]?.name;
  view.on('join', (_key, _current, joined: PresenceEntryOf<{ name: string }>) => {
    const who: string | undefined = joined.metas[0]?.name;
    void who;
  });
  // @ts-expect-error the metas have no `age`
  const age: number | undefined = view.list()[0]?.metas[0]?.age;
  // @ts-expect-error $presence is not an event to listen to
  client.on('$presence', () => undefined);
  void name;
  void age;
}
