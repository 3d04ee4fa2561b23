// Presence in the demo: `GET /api/rooms/{room}/presence` and the members' own views, for
// rooms entered from the page's way (`room.join`) and with `client.joinRoom` (the built-in
// `join_room`); with REDIS_URL, two instances list the same members.
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Client } from '@pkg/client';
import type { ClientEvents, ServerEvents } from '../src/events';
import { displayName } from '../src/names';
import { startTestDemo, useDemo, type RunningDemo } from './helpers/app';

const start = useDemo();
const clients: Array<Client<ClientEvents, ServerEvents>> = [];
const extra: RunningDemo[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  for (const d of extra.splice(0)) await d.stop();
});

async function connect(
  demo: RunningDemo,
  token?: string,
): Promise<Client<ClientEvents, ServerEvents>> {
  const client = new Client<ClientEvents, ServerEvents>(demo.ws, {
    network: null,
    reconnection: false,
    ...(token ? { auth: token } : {}),
  });
  clients.push(client);
  await client.connect();
  return client;
}

interface Listed {
  room: string;
  keys: number;
  connections: number;
  list: Array<{
    key: string;
    name: string;
    connections: number;
    metas: Array<{ clientId: string; name?: string }>;
  }>;
}

async function listed(
  demo: RunningDemo,
  room: string,
  token?: string,
): Promise<globalThis.Response> {
  return fetch(`${demo.http}/api/rooms/${room}/presence`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}

/** Polls the route until `check` accepts the body (presence flushes every 100 ms). */
async function until(
  demo: RunningDemo,
  room: string,
  check: (body: Listed) => boolean,
): Promise<Listed> {
  for (let i = 0; ; i += 1) {
    const res = await listed(demo, room);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Listed;
    if (check(body) || i === 100) return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const summary = (body: Listed): string[] =>
  body.list.map((e) => `${e.name}:${e.connections}`).sort();

describe('GET /api/rooms/{room}/presence', () => {
  it('lists nobody in an empty room', async () => {
    const demo = await start();
    const res = await listed(demo, 'lobby');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ room: 'lobby', keys: 0, connections: 0, list: [] });
  });

  it.each(['bad%20room', 'x'.repeat(33), 'caf%C3%A9', '%00'])(
    'answers 400 for the room name %s',
    async (room) => {
      const demo = await start();
      const res = await listed(demo, room);
      expect(res.status).toBe(400);
      const body = (await res.json()) as Record<string, unknown>;
      expect(JSON.stringify(body)).toContain('room');
    },
  );

  it('lists a private room to signed-in users only', async () => {
    const demo = await start();
    const anonymous = await listed(demo, 'private-team');
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: string }).error).toContain('signed-in users');
    const bad = await listed(demo, 'private-team', 'not-a-token');
    expect(bad.status).toBe(401);
    await bad.arrayBuffer();
    const alice = await listed(demo, 'private-team', 'alice-token');
    expect(alice.status).toBe(200);
    expect(await alice.json()).toEqual({ room: 'private-team', keys: 0, connections: 0, list: [] });
  });

  it('lists users by the name of their token (two tabs once) and guests by their chat name, joined either way', async () => {
    const demo = await start();
    // The page's way: room.join, which joins on the server.
    const aliceTab1 = await connect(demo, 'alice-token');
    aliceTab1.emit('room.join', { room: 'lobby' });
    // The built-in join_room.
    const aliceTab2 = await connect(demo, 'alice-token');
    await aliceTab2.joinRoom('lobby');
    const guest = await connect(demo);
    await guest.joinRoom('lobby');
    const bob = await connect(demo, 'bob-token');
    bob.emit('room.join', { room: 'lobby' });

    // A guest who chose no name: the name the chat gives it (guest- and six hex digits).
    const guestName = displayName(undefined, undefined, guest.id!);
    expect(guestName).toMatch(/^guest-[0-9a-f]{6}$/);

    const body = await until(demo, 'lobby', (b) => b.connections === 4);
    expect(summary(body)).toEqual(['Alice:2', 'Bob:1', `${guestName}:1`].sort());
    expect(body.keys).toBe(3);
    const alice = body.list.find((e) => e.key === 'alice')!;
    expect(alice.metas.map((m) => m.clientId).sort()).toEqual([aliceTab1.id, aliceTab2.id].sort());
    expect(body.list.find((e) => e.key === guest.id)!.metas).toEqual([
      { clientId: guest.id, joinedAt: expect.any(Number), name: guestName },
    ]);

    // A member's own view says the same.
    const view = guest.presence('lobby');
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (view.stats()?.connections === 4) resolve();
      };
      view.on('sync', check);
      check();
    });
    expect(
      view.list((key, { metas }) => `${metas[0]?.name ?? key}:${metas.length}`).sort(),
    ).toEqual(['Alice:2', 'Bob:1', `${guestName}:1`].sort());

    // One of Alice's tabs closes: Alice stays, with one connection; Bob leaves.
    aliceTab1.disconnect();
    bob.disconnect();
    const after = await until(demo, 'lobby', (b) => b.connections === 2);
    expect(summary(after)).toEqual(['Alice:1', `${guestName}:1`].sort());
    await until(demo, 'elsewhere', (b) => b.keys === 0);
  });
});

describe('names in presence', () => {
  it('names a guest as the chat does, and follows a new name given in the same room', async () => {
    const demo = await start();
    const grace = await connect(demo);
    const joined = (): Promise<{ name: string }> =>
      new Promise((resolve) => grace.once('room.joined', resolve));
    let answer = joined();
    grace.emit('room.join', { room: 'names', name: 'Grace' });
    expect((await answer).name).toBe('guest-Grace');
    const first = await until(demo, 'names', (b) => b.keys === 1);
    expect(summary(first)).toEqual(['guest-Grace:1']);
    expect(first.list[0]!.key).toBe(grace.id);

    // The same room again with another name: still one connection, under the new name.
    answer = joined();
    grace.emit('room.join', { room: 'names', name: 'Gracie' });
    expect((await answer).name).toBe('guest-Gracie');
    const renamed = await until(demo, 'names', (b) => b.list[0]?.name === 'guest-Gracie');
    expect(summary(renamed)).toEqual(['guest-Gracie:1']);
  });
});

function redisAnswers(): boolean {
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      "const s=require('net').connect(6379,'127.0.0.1',()=>s.write('PING\\r\\n'));s.setTimeout(1000,()=>process.exit(1));s.on('error',()=>process.exit(1));s.on('data',d=>process.exit(String(d).startsWith('+PONG')?0:1));",
    ],
    { stdio: 'ignore' },
  );
  return probe.status === 0;
}

const redis = redisAnswers();
if (!redis && process.env['CI'] === 'true') {
  throw new Error(
    'demo presence across instances: Redis at 127.0.0.1:6379 is unreachable, and CI=true requires it.',
  );
}
if (!redis) console.warn('demo presence across instances: skipped, no Redis at 127.0.0.1:6379.');

(redis ? describe : describe.skip)('presence across two instances (REDIS_URL)', () => {
  it('lists the members of both instances on either', async () => {
    const room = `both-${process.pid}-${Date.now()}`;
    // The rate limits live in the shared Redis: a higher budget for the polling below.
    const config = { redisUrl: 'redis://127.0.0.1:6379', rateLimitScale: 50 };
    const a = await startTestDemo(config);
    extra.push(a);
    const b = await startTestDemo(config);
    extra.push(b);
    const alice = await connect(a, 'alice-token');
    await alice.joinRoom(room);
    const bob = await connect(b, 'bob-token');
    await bob.joinRoom(room);
    for (const demo of [a, b]) {
      const body = await until(demo, room, (x) => x.keys === 2);
      expect(summary(body)).toEqual(['Alice:1', 'Bob:1']);
    }
    bob.disconnect();
    const left = await until(a, room, (x) => x.keys === 1);
    expect(summary(left)).toEqual(['Alice:1']);
  });
});
