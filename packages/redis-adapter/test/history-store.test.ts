// Room history in Redis Streams (the adapter's `history`), against a private redis-server on
// a free port (its MONITOR output and keys are ours alone) and servers in this process with
// real `ws` clients: positions and the text built around them, one command per publish,
// MAXLEN and ttl, the epoch after the stream is lost, and positions that do not exist.
// (While Redis is down: history-outage.test.ts.)
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import WebSocket from 'ws';
import { NullLogger, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '../src/index';
import { RedisUnderTest, waitFor, redisServerAvailableSync } from './helpers';
import { Logs, POLICY, template } from './history-kit';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter history store test');
const describeRedis = hasRedisServer ? describe : describe.skip;

interface Received {
  event: string;
  data: { n: number };
  pos: { room: string; namespace: string; epoch: string; offset: number };
}

describeRedis('RedisHistoryStore', () => {
  const env = new RedisUnderTest();
  const servers: Server[] = [];
  const sockets: WebSocket[] = [];
  let prefixes = 0;

  beforeAll(() => env.start());

  afterEach(async () => {
    for (const ws of sockets.splice(0)) ws.terminate();
    for (const s of servers.splice(0)) await s.close();
  });

  afterAll(() => env.stop());

  async function start(keyPrefix: string, logger = new Logs()) {
    const server = new Server(
      new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0 }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    const adapter = new RedisAdapter({
      url: env.redis.url,
      keyPrefix,
      logger,
      maxReconnectDelay: 100,
    });
    server.setAdapter(adapter);
    await server.run();
    await adapter.ready();
    servers.push(server);
    const history = adapter.history;
    if (!history) throw new Error('the adapter has no history store');
    return { server, adapter, history, logger };
  }

  /** A `ws` client of `server` in room `room`; returns what it receives. */
  async function member(server: Server, adapter: RedisAdapter, room: string) {
    const before = new Set(server.getAllClients());
    const ws = new WebSocket(`ws://127.0.0.1:${server.getPort()}/`);
    sockets.push(ws);
    const received: Received[] = [];
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw)) as Received;
      if (m.event === 'm') received.push(m);
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    let id = '';
    await waitFor(() => {
      id = server.getAllClients().find((c) => !before.has(c)) ?? '';
      return id !== '';
    }, 'the client to be listed');
    server.joinRoom(id, room);
    await adapter.synced();
    return received;
  }

  const prefix = (): string => `hist${(prefixes += 1)}`;

  it('numbers a room from 1 in one epoch, delivers each once in order, and reads them back', async () => {
    const { server, adapter, history } = await start(prefix());
    const received = await member(server, adapter, 'r');
    const published = [];
    for (let n = 1; n <= 5; n += 1) {
      published.push(
        await history.publish({ namespace: '/', room: 'r' }, template('r', n), POLICY),
      );
    }
    expect(published.map((p) => p.position.offset)).toEqual([1, 2, 3, 4, 5]);
    const epoch = published[0]!.position.epoch;
    expect(epoch).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(published.map((p) => p.position.epoch))).toEqual(new Set([epoch]));
    // The text is the template around the position, valid JSON with `pos` last.
    expect(JSON.parse(published[2]!.text as string)).toEqual({
      event: 'm',
      data: { n: 3 },
      pos: { room: 'r', namespace: '/', epoch, offset: 3 },
    });
    await waitFor(() => received.length === 5, 'five deliveries');
    expect(received.map((m) => m.data.n)).toEqual([1, 2, 3, 4, 5]);
    expect(received.map((m) => m.pos.offset)).toEqual([1, 2, 3, 4, 5]);

    const since = await history.read('/', 'r', {
      since: { offset: 2, epoch },
      limit: 300,
      policy: POLICY,
    });
    expect(since).toEqual({
      position: { offset: 5, epoch },
      messages: published.slice(2).map((p) => ({ offset: p.position.offset, text: p.text })),
      complete: true,
    });
    const upToDate = await history.read('/', 'r', {
      since: { offset: 5, epoch },
      limit: 300,
      policy: POLICY,
    });
    expect(upToDate).toEqual({ position: { offset: 5, epoch }, messages: [], complete: true });
    const last = await history.read('/', 'r', { limit: 2, policy: POLICY });
    expect(last.messages.map((m) => m.offset)).toEqual([4, 5]);
    expect(last.complete).toBe(false); // older messages are kept
    const all = await history.read('/', 'r', { limit: 300, policy: POLICY });
    expect(all.messages.map((m) => m.offset)).toEqual([1, 2, 3, 4, 5]);
    expect(all.complete).toBe(true);
    // A room with nothing kept answers a quiet position (offset 0 of `~<time>`) and stores
    // nothing; a client that read the quiet room can recover from it once messages come.
    const never = await history.read('/', 'nothing', { limit: 10, policy: POLICY });
    expect(never).toEqual({
      position: { offset: 0, epoch: expect.stringMatching(/^~\d+$/) },
      messages: [],
      complete: true,
    });
    const first = await history.publish(
      { namespace: '/', room: 'nothing' },
      template('nothing', 1),
      POLICY,
    );
    expect(first.position).toEqual({ offset: 1, epoch: expect.stringMatching(/^[0-9a-f]{16}$/) });
    const caughtUp = await history.read('/', 'nothing', {
      since: never.position!,
      limit: 10,
      policy: POLICY,
    });
    expect(caughtUp.complete).toBe(true);
    expect(caughtUp.messages.map((m) => m.offset)).toEqual([1]);
  });

  it('keeps every room apart, and the keys of a room in one hash slot', async () => {
    const keyPrefix = prefix();
    const { history } = await start(keyPrefix);
    await history.publish({ namespace: '/', room: 'a' }, template('a', 1), POLICY);
    await history.publish({ namespace: '/chat', room: 'a' }, template('a', 1), POLICY);
    const b = await history.publish({ namespace: '/', room: 'a}{b' }, template('a}{b', 1), POLICY);
    expect(b.position.offset).toBe(1);
    const keys = (await env.admin.keys(`${keyPrefix}:hist:*`)).sort();
    expect(keys).toEqual(
      [
        `${keyPrefix}:hist:{%2F:a}:m`,
        `${keyPrefix}:hist:{%2F:a}:s`,
        `${keyPrefix}:hist:{%2F:a%7D%7Bb}:m`,
        `${keyPrefix}:hist:{%2F:a%7D%7Bb}:s`,
        `${keyPrefix}:hist:{%2Fchat:a}:m`,
        `${keyPrefix}:hist:{%2Fchat:a}:s`,
      ].sort(),
    );
  });

  it('publishes with exactly one command to Redis (EVALSHA), the rest inside the script', async () => {
    const { history } = await start(prefix());
    await history.publish({ namespace: '/', room: 'warm' }, template('warm', 0), POLICY); // loads the script
    // MONITOR over a raw socket: one line per command, `[0 lua]` for those a script ran.
    const monitor = connect(env.redis.port, '127.0.0.1');
    let output = '';
    monitor.on('data', (chunk) => (output += String(chunk)));
    await new Promise((resolve) => monitor.once('connect', resolve));
    monitor.write('MONITOR\r\n');
    await waitFor(() => output.startsWith('+OK'), 'MONITOR to start');
    const lines = (): string[] => output.split('\r\n').filter((l) => l.startsWith('+1'));
    for (let n = 1; n <= 10; n += 1) {
      await history.publish({ namespace: '/', room: 'one-trip' }, template('one-trip', n), POLICY);
    }
    await waitFor(
      () => lines().filter((l) => l.includes('"PUBLISH"')).length >= 10,
      'the monitor lines',
    );
    monitor.destroy();
    const fromClients = lines().filter((l) => !l.includes('[0 lua]'));
    expect(fromClients.map((l) => /"([A-Za-z]+)"/.exec(l)?.[1]?.toUpperCase())).toEqual(
      Array(10).fill('EVALSHA'),
    );
    expect(lines().filter((l) => l.includes('[0 lua]') && l.includes('"XADD"'))).toHaveLength(10);
  });

  it('keeps at most `size` messages; older positions are too far behind', async () => {
    const keyPrefix = prefix();
    const { history } = await start(keyPrefix);
    const policy = { size: 5, ttl: 60_000 };
    let epoch = '';
    for (let n = 1; n <= 250; n += 1) {
      epoch = (await history.publish({ namespace: '/', room: 'big' }, template('big', n), policy))
        .position.epoch;
    }
    // MAXLEN ~ trims whole blocks: the stream is bounded, not exact; reads apply `size` exactly.
    expect(await env.admin.xLen(`${keyPrefix}:hist:{%2F:big}:s`)).toBeLessThan(250);
    const last = await history.read('/', 'big', { limit: 300, policy });
    expect(last.messages.map((m) => m.offset)).toEqual([246, 247, 248, 249, 250]);
    expect(last.complete).toBe(true);
    expect(
      await history.read('/', 'big', { since: { offset: 244, epoch }, limit: 300, policy }),
    ).toEqual({
      position: { offset: 250, epoch },
      messages: [],
      complete: false,
      reason: 'too_far_behind',
    });
    const kept = await history.read('/', 'big', {
      since: { offset: 245, epoch },
      limit: 300,
      policy,
    });
    expect(kept.messages.map((m) => m.offset)).toEqual([246, 247, 248, 249, 250]);
    expect(kept.complete).toBe(true);
    // More missed than the replay bound: nothing replayed, too far behind.
    const bounded = await history.read('/', 'big', {
      since: { offset: 245, epoch },
      limit: 3,
      policy,
    });
    expect(bounded).toMatchObject({ messages: [], complete: false, reason: 'too_far_behind' });
  });

  it('forgets messages older than ttl (filtered on read, keys expire)', async () => {
    const keyPrefix = prefix();
    const { history } = await start(keyPrefix);
    const policy = { size: 100, ttl: 1000 };
    const first = await history.publish({ namespace: '/', room: 't' }, template('t', 1), policy);
    const epoch = first.position.epoch;
    await new Promise((r) => setTimeout(r, 600));
    // Each message makes the keys live `ttl` longer; the first one is now out of date.
    await history.publish({ namespace: '/', room: 't' }, template('t', 2), policy);
    await new Promise((r) => setTimeout(r, 500));
    const read = await history.read('/', 't', { limit: 10, policy });
    expect(read.messages.map((m) => m.offset)).toEqual([2]);
    expect(
      await history.read('/', 't', { since: { offset: 0, epoch }, limit: 10, policy }),
    ).toMatchObject({ complete: false, reason: 'too_far_behind', messages: [] });
    const ttl = await env.admin.pTTL(`${keyPrefix}:hist:{%2F:t}:s`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1000);
    await waitFor(
      async () => (await env.admin.exists(`${keyPrefix}:hist:{%2F:t}:s`)) === 0,
      'the stream to expire',
    );
    // The epoch outlives the stream: a client that saw everything is still up to date.
    expect(
      await history.read('/', 't', { since: { offset: 2, epoch }, limit: 10, policy }),
    ).toEqual({
      position: { offset: 2, epoch },
      messages: [],
      complete: true,
    });
    // The next message cannot follow offset 2 in a stream that lost 1 and 2: a new epoch.
    const next = await history.publish({ namespace: '/', room: 't' }, template('t', 3), policy);
    expect(next.position.offset).toBe(1);
    expect(next.position.epoch).not.toBe(epoch);
  });

  it('starts a new epoch when the stream was deleted, so old positions get epoch_changed', async () => {
    const keyPrefix = prefix();
    const { history } = await start(keyPrefix);
    let old = '';
    for (let n = 1; n <= 3; n += 1) {
      old = (await history.publish({ namespace: '/', room: 'd' }, template('d', n), POLICY))
        .position.epoch;
    }
    await env.admin.del(`${keyPrefix}:hist:{%2F:d}:s`);
    // Lost within ttl (not expired): a client behind is told at once, before any new message.
    expect(
      await history.read('/', 'd', { since: { offset: 2, epoch: old }, limit: 10, policy: POLICY }),
    ).toMatchObject({ messages: [], complete: false, reason: 'epoch_changed' });
    expect(await history.read('/', 'd', { limit: 10, policy: POLICY })).toMatchObject({
      messages: [],
      complete: false,
      reason: 'epoch_changed',
    });
    const next = await history.publish({ namespace: '/', room: 'd' }, template('d', 4), POLICY);
    expect(next.position.offset).toBe(1);
    expect(next.position.epoch).not.toBe(old);
    expect(
      await history.read('/', 'd', { since: { offset: 3, epoch: old }, limit: 10, policy: POLICY }),
    ).toEqual({
      position: next.position,
      messages: [],
      complete: false,
      reason: 'epoch_changed',
    });
    // Both keys gone (Redis lost everything): a new epoch as well.
    await env.admin.del([`${keyPrefix}:hist:{%2F:d}:s`, `${keyPrefix}:hist:{%2F:d}:m`]);
    const again = await history.publish({ namespace: '/', room: 'd' }, template('d', 5), POLICY);
    expect(again.position.offset).toBe(1);
    expect([old, next.position.epoch]).not.toContain(again.position.epoch);
    // Only the epoch key deleted: the stream is replaced too, offsets start again.
    await history.publish({ namespace: '/', room: 'd' }, template('d', 6), POLICY);
    await env.admin.del(`${keyPrefix}:hist:{%2F:d}:m`);
    const third = await history.publish({ namespace: '/', room: 'd' }, template('d', 7), POLICY);
    expect(third.position.offset).toBe(1);
    const read = await history.read('/', 'd', { limit: 10, policy: POLICY });
    expect(read.messages.map((m) => m.offset)).toEqual([1]);
  });

  it('answers positions that do not exist with complete: false, never a throw', async () => {
    const { history } = await start(prefix());
    const { position } = await history.publish(
      { namespace: '/', room: 'p' },
      template('p', 1),
      POLICY,
    );
    const read = (since: { offset: number; epoch: string }) =>
      history.read('/', 'p', { since, limit: 10, policy: POLICY });
    expect(await read({ offset: 2, epoch: position.epoch })).toMatchObject({
      complete: false,
      reason: 'invalid_position',
    });
    for (const bad of [
      { offset: -1, epoch: position.epoch },
      { offset: 1.5, epoch: position.epoch },
      { offset: Number.NaN, epoch: position.epoch },
      { offset: 0, epoch: '' },
      { offset: 0, epoch: 'x'.repeat(65) },
      { offset: 0, epoch: 7 as unknown as string },
    ]) {
      expect(await read(bad)).toEqual({
        position: null,
        messages: [],
        complete: false,
        reason: 'invalid_position',
      });
    }
    for (const epoch of ['other', '\ud800', 'a"b\\', "') return {} --"]) {
      expect(await read({ offset: 0, epoch })).toMatchObject({
        complete: false,
        reason: 'epoch_changed',
      });
    }
    expect(await read({ offset: 0, epoch: position.epoch })).toMatchObject({ complete: true });
  });

  it('delivers the messages of two instances to a room in position order on each', async () => {
    const keyPrefix = prefix();
    const a = await start(keyPrefix);
    const b = await start(keyPrefix);
    const onA = await member(a.server, a.adapter, 'mix');
    const onB = await member(b.server, b.adapter, 'mix');
    const sends = [];
    for (let n = 1; n <= 60; n += 1) {
      const from = n % 2 === 0 ? a : b;
      sends.push(from.history.publish({ namespace: '/', room: 'mix' }, template('mix', n), POLICY));
    }
    await Promise.all(sends);
    await waitFor(() => onA.length === 60 && onB.length === 60, 'sixty deliveries on each');
    for (const got of [onA, onB]) {
      expect(got.map((m) => m.pos.offset)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    }
    expect(a.adapter.stats().historyWrites + b.adapter.stats().historyWrites).toBe(60);
  });

  it('leaves out `except` on every instance, its own included', async () => {
    const keyPrefix = prefix();
    const a = await start(keyPrefix);
    const got = await member(a.server, a.adapter, 'x');
    const other = await member(a.server, a.adapter, 'x');
    const ids = a.server.getAllClients();
    await a.history.publish(
      { namespace: '/', room: 'x', except: ids[0]! },
      template('x', 1),
      POLICY,
    );
    await a.history.publish({ namespace: '/', room: 'x' }, template('x', 2), POLICY);
    await waitFor(() => got.length + other.length === 3, 'three deliveries');
    expect([got.length, other.length].sort()).toEqual([1, 2]);
  });
});
