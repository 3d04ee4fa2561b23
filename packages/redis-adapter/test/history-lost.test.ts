// Offsets a failover lost (a replica took over without its master's last writes: the cluster
// scripts record them in the room's hash, field `l`) are told to the clients that recover or
// read across them: every kept message is replayed around them, and `$recovered` (or the
// `$history` answer) says `messages_lost` with the exact offsets. The read script is the same
// on one Redis and on a cluster, so this test writes the state a forced failover leaves by
// hand on the shared Redis: the room's hash names the range, and its stream lacks it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import type { Server } from '@pkg/core';
import {
  V1Client,
  type V1Message,
  sharedRedisAvailableSync,
  startHistoryServer,
  waitFor,
} from './helpers';

const describeRedis = sharedRedisAvailableSync('@pkg/redis-adapter lost offsets test')
  ? describe
  : describe.skip;

/** A version 1 client on `server`. */
const open = (server: Server): Promise<V1Client> =>
  V1Client.open(`ws://127.0.0.1:${server.getPort()}/`);

/** The offsets of the room messages a client received. */
const offsetsOf = (client: V1Client): number[] =>
  client.received.filter((m) => m.event === 'msg').map((m) => m.pos!.offset);

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describeRedis('offsets lost in a failover, with the Redis adapter', () => {
  const keyPrefix = `lost-${randomBytes(6).toString('hex')}`;
  const admin = createClient({ url: 'redis://127.0.0.1:6379' });
  const room = 'r:lost';
  let a: Server;
  let b: Server;
  let epoch: string;
  let meta: string;
  let stream: string;

  beforeAll(async () => {
    await admin.connect();
    const options = { room: 'r:*', size: 100, adapter: { keyPrefix } };
    a = await startHistoryServer(options);
    b = await startHistoryServer(options);
    for (let n = 1; n <= 20; n += 1) a.broadcast('msg', { n }, { room });
    await waitFor(async () => (await b.history(room)).messages.length === 20, '20 kept');
    meta = (await admin.keys(`${keyPrefix}:hist:*:m`))[0]!;
    stream = (await admin.keys(`${keyPrefix}:hist:*:s`))[0]!;
    epoch = (await admin.hGet(meta, 'e'))!;
    // What a forced failover leaves: offsets 6 to 8 and 14 were handed out and delivered,
    // then lost with the master; the new master's stream lacks them.
    await admin.xDel(stream, ['0-6', '0-7', '0-8', '0-14']);
    await admin.hSet(meta, 'l', '6-8 14-14 ');
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    const keys = await admin.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await admin.del(keys);
    await admin.quit();
  });

  it.each([
    {
      since: 2,
      lost: [
        { from: 6, to: 8 },
        { from: 14, to: 14 },
      ],
      replayed: [3, 4, 5, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20],
    },
    {
      since: 5,
      lost: [
        { from: 6, to: 8 },
        { from: 14, to: 14 },
      ],
      replayed: [9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20],
    },
    // A client that received offset 7 live before the loss misses only the rest of the range.
    {
      since: 7,
      lost: [
        { from: 8, to: 8 },
        { from: 14, to: 14 },
      ],
      replayed: [9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20],
    },
    {
      since: 8,
      lost: [{ from: 14, to: 14 }],
      replayed: [9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20],
    },
  ])(
    'replays every kept message after $since and names the lost offsets',
    async ({ since, lost, replayed }) => {
      const client = await open(b);
      client.request('join_room', { room, since: { epoch, offset: since } }, 'j');
      const recovered = await client.next((m) => m.event === '$recovered');
      expect(recovered.data).toEqual({
        room,
        namespace: '/',
        recovered: false,
        reason: 'messages_lost',
        replayed: replayed.length,
        position: { epoch, offset: 20 },
        lost,
      });
      expect(offsetsOf(client)).toEqual(replayed);
      client.ws.close();
    },
  );

  it('recovers with no report from a position past every lost offset', async () => {
    const client = await open(a);
    client.request('join_room', { room, since: { epoch, offset: 15 } }, 'j');
    const recovered = await client.next((m) => m.event === '$recovered');
    expect(recovered.data).toMatchObject({ recovered: true });
    expect(recovered.data).not.toHaveProperty('lost');
    expect(offsetsOf(client).slice(0, 5)).toEqual(range(16, 20));
    client.ws.close();
  });

  it('answers $history across lost offsets with messages_lost and the offsets within its span', async () => {
    const client = await open(b);
    client.request('join_room', { room }, 'j');
    await client.next((m) => m.id === 'j');
    client.request('$history', { room, since: { epoch, offset: 4 }, limit: 6 }, 'h1');
    const paged = await client.next((m) => m.id === 'h1');
    // Cut at 6 messages (5, 9, 10, 11, 12, 13): offset 14 lies past the answer's span.
    const offsetsIn = (answer: V1Message): number[] =>
      (answer.data['messages'] as V1Message[]).map((m) => m.pos!.offset);
    expect(offsetsIn(paged)).toEqual([5, 9, 10, 11, 12, 13]);
    expect(paged.data).toMatchObject({
      complete: false,
      reason: 'messages_lost',
      lost: [{ from: 6, to: 8 }],
    });

    client.request('$history', { room, limit: 7 }, 'h2');
    const newest = await client.next((m) => m.id === 'h2');
    expect(offsetsIn(newest)).toEqual([13, ...range(15, 20)]);
    expect(newest.data).toMatchObject({
      complete: false,
      reason: 'messages_lost',
      lost: [{ from: 14, to: 14 }],
    });

    // The newest messages after the last loss: only cut by the limit.
    client.request('$history', { room, limit: 6 }, 'h3');
    const last = await client.next((m) => m.id === 'h3');
    expect(offsetsIn(last)).toEqual(range(15, 20));
    expect(last.data).toMatchObject({ complete: false, reason: 'truncated' });
    expect(last.data).not.toHaveProperty('lost');
    client.ws.close();
  });

  it('delivers live traffic after the report, numbered after the room end in the same epoch', async () => {
    const client = await open(b);
    client.request('join_room', { room, since: { epoch, offset: 2 } }, 'j');
    await client.next((m) => m.event === '$recovered');
    a.broadcast('msg', { n: 'live' }, { room });
    const live = await client.next((m) => m.event === 'msg' && m.data['n'] === 'live');
    expect(live.pos).toMatchObject({ epoch, offset: 21 });
    expect(offsetsOf(client).slice(-2)).toEqual([20, 21]);
    client.ws.close();
  });

  it('fails a recovery as too_far_behind when the stream lacks an offset the hash does not name', async () => {
    // Offset 10 gone without being recorded as lost, and a malformed entry in the field.
    await admin.xDel(stream, ['0-10']);
    await admin.hSet(meta, 'l', '6-8 x-y 14-14 ');
    const client = await open(a);
    client.request('join_room', { room, since: { epoch, offset: 2 } }, 'j');
    const recovered = await client.next((m) => m.event === '$recovered');
    expect(recovered.data).toMatchObject({
      recovered: false,
      reason: 'too_far_behind',
      replayed: 0,
    });
    expect(recovered.data).not.toHaveProperty('lost');
    expect(offsetsOf(client)).toEqual([]);
    client.ws.close();
  });
});
