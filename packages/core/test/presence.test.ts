// Presence over real sockets: the state a member gets when it joins, the batched diffs of
// joins and leaves, two connections of one key, meta updates, the bound on messages under a
// join storm, rooms over the list bound, and clients that do odd things.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Parser } from '@asyncapi/parser';
import type { PresenceDiffData, PresenceStateData } from '@pkg/wire';
import { RoomsController, type Server, type ServerConfigOptions } from '../src/index';
import { TestClient, cleanup, startServer, type Envelope } from './helpers';

afterEach(cleanup);

const PRESENCE: ServerConfigOptions = { presence: [{ match: 'chat:*' }] };

interface Member {
  client: TestClient;
  id: string;
}

/** A protocol version 1 client (`$hello` said), with its client id. */
async function v1(url: string, auth?: string): Promise<Member> {
  const client = await TestClient.connect(url, {}, ['pkg.v1']);
  client.send('$hello', auth === undefined ? { v: 1 } : { v: 1, auth });
  const welcome = await client.next('$welcome');
  return { client, id: String(welcome.data['clientId']) };
}

async function join(m: Member, room: string): Promise<void> {
  m.client.send('join_room', { room });
  await m.client.next('room_joined');
}

async function leave(m: Member, room: string): Promise<void> {
  m.client.send('leave_room', { room });
  await m.client.next('room_left');
}

const state = (e: Envelope): PresenceStateData => e.data as unknown as PresenceStateData;
const diff = (e: Envelope): PresenceDiffData => e.data as unknown as PresenceDiffData;
const clientIds = (s: Record<string, { metas: Array<{ clientId: string }> }>): string[] =>
  Object.values(s)
    .flatMap((entry) => entry.metas.map((m) => m.clientId))
    .sort();

/** Lets every flush that is due happen (two intervals of the given length). */
const settle = (interval = 100): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, interval * 2 + 20));

async function rooms(config: ServerConfigOptions = {}, setup?: (s: Server) => void) {
  return startServer([new RoomsController()], { ...PRESENCE, ...config }, setup);
}

describe('presence state and diffs', () => {
  it('sends the state to a member that joins, then diffs of joins and leaves to the others', async () => {
    const { wsUrl, server } = await rooms();
    const a = await v1(wsUrl);
    await join(a, 'chat:1');
    const first = state(await a.client.next('$presence'));
    expect(first.room).toBe('chat:1');
    expect(first.namespace).toBe('/');
    expect(Object.keys(first.state!)).toEqual([a.id]);
    expect(first.state![a.id]!.metas[0]).toMatchObject({ clientId: a.id });
    expect(typeof first.state![a.id]!.metas[0]!.joinedAt).toBe('number');

    const b = await v1(wsUrl);
    await join(b, 'chat:1');
    const joined = diff(await a.client.next('$presence_diff'));
    expect(Object.keys(joined.joins)).toEqual([b.id]);
    expect(joined.leaves).toEqual({});
    expect(clientIds(state(await b.client.next('$presence')).state!)).toEqual([a.id, b.id].sort());

    await leave(b, 'chat:1');
    const left = diff(await a.client.next('$presence_diff'));
    expect(left.joins).toEqual({});
    expect(Object.keys(left.leaves)).toEqual([b.id]);
    expect(Object.keys(await server.presence('chat:1'))).toEqual([a.id]);
    expect(await server.presenceStats('chat:1')).toEqual({ connections: 1, keys: 1 });

    // The member that left gets nothing more of that room.
    await settle();
    expect(b.client.pending().filter((e) => e.event.startsWith('$presence'))).toEqual([]);
  });

  it('leaves on disconnect, and tracks nothing in rooms no pattern matches', async () => {
    const { wsUrl, server } = await rooms();
    const a = await v1(wsUrl);
    const b = await v1(wsUrl);
    await join(a, 'chat:x');
    await join(b, 'chat:x');
    await join(a, 'lobby');
    await a.client.next('$presence');
    await b.client.next('$presence');
    await b.client.close();
    const left = diff(await a.client.next('$presence_diff'));
    expect(Object.keys(left.leaves)).toEqual([b.id]);
    await settle();
    expect(a.client.pending().filter((e) => e.data['room'] === 'lobby')).toEqual([]);
    await expect(server.presence('lobby')).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_INVALID_ARGUMENT',
    });
  });

  it('lists two connections of one identity as one key with two metas; one leaving is a meta leave', async () => {
    const { wsUrl, server } = await rooms({}, (s) =>
      s.addAuthHandler((ctx) => (ctx.auth ? { identity: ctx.auth } : true)),
    );
    const watcher = await v1(wsUrl);
    await join(watcher, 'chat:1');
    await watcher.client.next('$presence');
    const tab1 = await v1(wsUrl, 'ada');
    const tab2 = await v1(wsUrl, 'ada');
    await join(tab1, 'chat:1');
    await join(tab2, 'chat:1');
    const joined = diff(await watcher.client.next('$presence_diff'));
    const all = { ...joined.joins };
    if (Object.keys(all).length === 0 || all['ada']!.metas.length < 2) {
      Object.assign(all, diff(await watcher.client.next('$presence_diff')).joins);
    }
    const listed = await server.presence('chat:1');
    expect(Object.keys(listed).sort()).toEqual(['ada', watcher.id].sort());
    expect(listed['ada']!.metas.map((m) => m.clientId).sort()).toEqual([tab1.id, tab2.id].sort());
    expect(await server.presenceStats('chat:1')).toEqual({ connections: 3, keys: 2 });

    await tab1.client.close();
    const left = diff(await watcher.client.next('$presence_diff'));
    expect(left.leaves).toEqual({
      ada: { metas: [expect.objectContaining({ clientId: tab1.id })] },
    });
    expect((await server.presence('chat:1'))['ada']!.metas.map((m) => m.clientId)).toEqual([
      tab2.id,
    ]);
  });

  it('sets metas with the presence hook and updatePresence, bounded by presence_max_meta_bytes', async () => {
    const { wsUrl, server, logger } = await rooms({ presence_max_meta_bytes: 64 }, (s) =>
      s.onPresence(({ clientId, key }) =>
        clientId.length > 0 ? { name: `user ${key.length}`, clientId: 'forged' } : undefined,
      ),
    );
    const a = await v1(wsUrl);
    await join(a, 'chat:1');
    const meta = state(await a.client.next('$presence')).state![a.id]!.metas[0]!;
    expect(meta).toMatchObject({ clientId: a.id, name: `user ${a.id.length}` });

    const b = await v1(wsUrl);
    await join(b, 'chat:1');
    await a.client.next('$presence_diff');
    await b.client.next('$presence');
    expect(server.updatePresence(b.id, 'chat:1', { typing: true })).toBe(true);
    const update = diff(await a.client.next('$presence_diff'));
    expect(update.leaves[b.id]!.metas[0]).toMatchObject({
      clientId: b.id,
      name: expect.any(String),
    });
    expect(update.joins[b.id]!.metas[0]).toMatchObject({ clientId: b.id, typing: true });
    expect(update.joins[b.id]!.metas[0]!.joinedAt).toBe(update.leaves[b.id]!.metas[0]!.joinedAt);

    expect(() => server.updatePresence(b.id, 'chat:1', { bio: 'x'.repeat(100) })).toThrow(
      expect.objectContaining({ name: 'RangeError', code: 'PKG_ERR_CORE_PRESENCE_META_TOO_LARGE' }),
    );
    expect(server.updatePresence(b.id, 'chat:2', { typing: false })).toBe(false);
    expect(server.updatePresence('nobody', 'chat:1', { typing: false })).toBe(false);
    await settle();
    expect(a.client.pending().filter((e) => e.event === '$presence_diff')).toEqual([]);

    // A hook that returns too much: the member joins with a meta of its own members only.
    server.onPresence(() => ({ bio: 'y'.repeat(100) }));
    const c = await v1(wsUrl);
    await join(c, 'chat:1');
    const own = state(await c.client.next('$presence')).state![c.id]!.metas[0]!;
    expect(Object.keys(own).sort()).toEqual(['clientId', 'joinedAt']);
    expect(
      logger.lines.some((l) => l.context?.['code'] === 'PKG_ERR_CORE_PRESENCE_META_TOO_LARGE'),
    ).toBe(true);
  });
});

describe('presence under load and at its bounds', () => {
  it('gives each member a few diff messages for 1,000 joins within one interval', async () => {
    const { wsUrl, server } = await rooms({ presence_max_list: 2000 });
    const watchers = await Promise.all([v1(wsUrl), v1(wsUrl), v1(wsUrl)]);
    for (const w of watchers) await join(w, 'chat:storm');
    for (const w of watchers) await w.client.next('$presence');
    await settle();
    for (const w of watchers) w.client.received.length = 0;

    const others: TestClient[] = [];
    for (let i = 0; i < 1000; i += 100) {
      others.push(
        ...(await Promise.all(Array.from({ length: 100 }, () => TestClient.connect(wsUrl)))),
      );
    }
    const known = new Set(watchers.map((w) => w.id));
    const ids = server.getAllClients().filter((id) => !known.has(id));
    expect(ids).toHaveLength(1000);
    for (const id of ids) server.joinRoom(id, 'chat:storm');
    await settle();

    for (const w of watchers) {
      const diffs = w.client.received.filter((e) => e.event === '$presence_diff');
      expect(diffs.length).toBeGreaterThanOrEqual(1);
      expect(diffs.length).toBeLessThanOrEqual(3);
      const joined = diffs.flatMap((e) => Object.keys(diff(e).joins));
      expect(joined.sort()).toEqual([...ids].sort());
    }
    // Version 0 clients are listed but get no presence events.
    expect(await server.presenceStats('chat:storm')).toEqual({ connections: 1003, keys: 1003 });
    expect(others.some((c) => c.received.some((e) => e.event.startsWith('$presence')))).toBe(false);
  }, 60_000);

  it('sends stats instead of the list over presence_max_list, and the list again below it', async () => {
    const { wsUrl } = await rooms({ presence_max_list: 2 });
    const a = await v1(wsUrl);
    const b = await v1(wsUrl);
    await join(a, 'chat:big');
    await join(b, 'chat:big');
    await a.client.next('$presence');
    await b.client.next('$presence');
    await settle();
    a.client.received.length = 0;

    const c = await v1(wsUrl);
    await join(c, 'chat:big');
    // Crossing the bound: every member gets stats, nobody a diff.
    for (const m of [a, b, c]) {
      expect(state(await m.client.next('$presence')).stats).toEqual({ connections: 3, keys: 3 });
    }
    const d = await v1(wsUrl);
    await join(d, 'chat:big');
    expect(state(await d.client.next('$presence'))).toMatchObject({
      stats: { connections: 4, keys: 4 },
    });
    await settle();
    expect(a.client.received.filter((e) => e.event === '$presence_diff')).toEqual([]);

    await d.client.close();
    await c.client.close();
    const back = state(await a.client.next('$presence'));
    expect(back.stats).toBeUndefined();
    expect(clientIds(back.state!)).toEqual([a.id, b.id].sort());
  });
});

describe('presence with clients that do odd things', () => {
  it('ignores a second join and a leave before any join, and sends nothing for a join undone within the batch', async () => {
    const { wsUrl, server } = await rooms();
    const a = await v1(wsUrl);
    await join(a, 'chat:1');
    await a.client.next('$presence');
    const b = await v1(wsUrl);
    await leave(b, 'chat:1'); // never joined
    await join(b, 'chat:1');
    await join(b, 'chat:1'); // twice
    const joined = diff(await a.client.next('$presence_diff'));
    expect(joined.joins[b.id]!.metas).toHaveLength(1);
    await b.client.next('$presence');
    expect(await server.presenceStats('chat:1')).toEqual({ connections: 2, keys: 2 });
    await leave(b, 'chat:1');
    await leave(b, 'chat:1'); // twice
    expect(Object.keys(diff(await a.client.next('$presence_diff')).leaves)).toEqual([b.id]);

    // Joins and goes within one interval (here: disconnects mid-batch): nobody hears of it.
    const c = await v1(wsUrl);
    server.joinRoom(c.id, 'chat:1');
    await c.client.close();
    await settle();
    expect(a.client.pending().filter((e) => e.event.startsWith('$presence'))).toEqual([]);
    expect(await server.presenceStats('chat:1')).toEqual({ connections: 1, keys: 1 });
  });

  it('lists a version 0 client but sends it nothing', async () => {
    const { wsUrl, server } = await rooms();
    const old = await TestClient.connect(wsUrl);
    const a = await v1(wsUrl);
    old.send('join_room', { room: 'chat:1' });
    await old.next('room_joined');
    await join(a, 'chat:1');
    expect(clientIds(state(await a.client.next('$presence')).state!)).toHaveLength(2);
    await settle();
    expect(await server.presenceStats('chat:1')).toEqual({ connections: 2, keys: 2 });
    expect(old.received.filter((e) => e.event.startsWith('$'))).toEqual([]);
  });

  it('refuses $presence and $presence_diff sent by a client, early, twice or malformed, and lists only real members', async () => {
    const { wsUrl } = await rooms({ presence_interval: 50 });
    const a = await v1(wsUrl);
    await join(a, 'chat:1');
    await a.client.next('$presence');
    const b = await v1(wsUrl);
    const forged = [
      ['$presence', { room: 'chat:1', namespace: '/', state: { mallory: { metas: [] } } }],
      ['$presence_diff', { room: 'chat:1', namespace: '/', joins: { mallory: { metas: [] } } }],
      ['$presence_diff', { room: 'chat:1', namespace: '/', joins: { mallory: { metas: [] } } }],
      ['$presence', 'not an object'],
    ] as const;
    const send = (): void => {
      for (const [event, data] of forged) b.client.send(event, data);
    };
    // Before b is a member (early), then again as one (twice); the first refusal is answered
    // (repeats of one error code are answered at most once per interval), none is obeyed.
    send();
    expect((await b.client.next('error')).data['code']).toBe('invalid_event');
    await join(b, 'chat:1');
    send();
    await settle(50);
    expect(b.client.ws.readyState).toBe(b.client.ws.OPEN);
    const seen = [...a.client.received, ...b.client.received]
      .filter((e) => e.event === '$presence' || e.event === '$presence_diff')
      .map((e) => JSON.stringify(e.data));
    expect(seen.some((text) => text.includes('mallory'))).toBe(false);
    const lists = b.client.received.filter((e) => e.event === '$presence').map(state);
    expect(clientIds(lists.at(-1)!.state!)).toEqual([a.id, b.id].sort());
  });

  it('refuses odd arguments and settings with messages that say what to do', async () => {
    const { server } = await rooms();
    expect(() =>
      server.updatePresence('x', 'chat:1', [] as unknown as Record<string, unknown>),
    ).toThrow(expect.objectContaining({ code: 'PKG_ERR_CORE_INVALID_ARGUMENT' }));
    await expect(server.presenceStats('' as string)).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_INVALID_ARGUMENT',
    });
    expect(() => server.onPresence('x' as unknown as undefined)).toThrow(/onPresence expects/);
    await expect(
      startServer([], { presence: [{ match: '' }] } as ServerConfigOptions),
    ).rejects.toThrow(/"presence" must be an array of \{match, namespace\?\}/);
    await expect(
      startServer([], { presence: [{ match: 'a', namespace: 'x' }] } as ServerConfigOptions),
    ).rejects.toThrow(/namespace a string starting with "\/"/);
  });
});

describe('presence in the AsyncAPI document', () => {
  it('documents $presence and $presence_diff when presence is on, and not otherwise', async () => {
    const { server } = await rooms();
    const doc = server.asyncapi();
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(doc));
    expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
    const sent = document!
      .operations()
      .all()
      .filter((o) => o.action() === 'send')
      .map((o) => o.messages().all()[0]!.name());
    expect(sent).toEqual(expect.arrayContaining(['$presence', '$presence_diff']));
    const messages = (doc['components'] as { messages: Record<string, { payload: unknown }> })
      .messages;
    expect(JSON.stringify(messages['server._presence_diff']!.payload)).toContain('"leaves"');
    const { server: plain } = await startServer([new RoomsController()]);
    expect(JSON.stringify(plain.asyncapi())).not.toContain('$presence');
  });
});

describe('presence and recovery sessions', () => {
  it('leaves when a session’s connection drops, joins again and resends the state on resume, and leaves for good when the session ends', async () => {
    const { wsUrl, server } = await rooms();
    const watcher = await v1(wsUrl);
    await join(watcher, 'chat:s');
    await watcher.client.next('$presence');
    const first = await TestClient.connect(wsUrl, {}, ['pkg.v1']);
    first.send('$hello', { v: 1 });
    const welcome = (await first.next('$welcome')).data;
    const id = String(welcome['clientId']);
    first.send('join_room', { room: 'chat:s' });
    await first.next('room_joined');
    await first.next('$presence');
    expect(Object.keys(diff(await watcher.client.next('$presence_diff')).joins)).toEqual([id]);

    // Dropped without a close frame: the session waits, the entry leaves at once.
    first.ws.terminate();
    expect(Object.keys(diff(await watcher.client.next('$presence_diff')).leaves)).toEqual([id]);
    expect(await server.presenceStats('chat:s')).toEqual({ connections: 1, keys: 1 });

    const again = await TestClient.connect(wsUrl, {}, ['pkg.v1']);
    again.send('$hello', { v: 1, resume: { session: welcome['session'], seq: 0 } });
    expect((await again.next('$welcome')).data).toMatchObject({ resumed: true, clientId: id });
    expect(clientIds(state(await again.next('$presence')).state!)).toEqual([watcher.id, id].sort());
    expect(Object.keys(diff(await watcher.client.next('$presence_diff')).joins)).toEqual([id]);

    server.disconnectClient(id);
    expect(Object.keys(diff(await watcher.client.next('$presence_diff')).leaves)).toEqual([id]);
    expect(await server.presenceStats('chat:s')).toEqual({ connections: 1, keys: 1 });
  });
});

// docs/protocol.md: $presence and $presence_diff are the control events that carry `seq`.
describe('presence events in a session', () => {
  it('carry the next seq of the session, like event messages, unlike other control events', async () => {
    const { wsUrl } = await rooms();
    const a = await v1(wsUrl);
    a.client.send('$ping', {});
    const pong = await a.client.next('$pong');
    expect(pong).not.toHaveProperty('seq');
    await join(a, 'chat:seq');
    const joined = a.client.received.find((m) => m.event === 'room_joined') as Envelope & {
      seq?: number;
    };
    const first = (await a.client.next('$presence')) as Envelope & { seq?: number };
    const b = await v1(wsUrl);
    await join(b, 'chat:seq');
    const change = (await a.client.next('$presence_diff')) as Envelope & { seq?: number };
    expect(typeof joined.seq).toBe('number');
    expect(first.seq).toBe(joined.seq! + 1);
    expect(change.seq).toBe(first.seq! + 1);
  });
});
