// Reading a room's history never writes to Redis: recoveries (`join_room.since`) and
// `$history` requests for rooms that never had a message leave no key behind, however many
// new names a client tries. A quiet room's position still recovers, on any instance. A read
// for a client leaves out what a broadcast's `except` left it out of. Two servers in this
// process share the shared Redis under a prefix of their own; real `ws` clients speak
// protocol version 1.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import WebSocket from 'ws';
import { MAX_KEPT_EXCEPT, type Server } from '@pkg/core';
import { sharedRedisAvailableSync, startHistoryServer, waitFor } from './helpers';

const describeRedis = sharedRedisAvailableSync('@pkg/redis-adapter history reads test')
  ? describe
  : describe.skip;

interface Message {
  event: string;
  id?: unknown;
  data: Record<string, unknown>;
  pos?: { epoch: string; offset: number };
}

/** A protocol version 1 client that keeps what it receives. */
class V1Client {
  readonly received: Message[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => this.received.push(JSON.parse(String(raw)) as Message));
  }

  static async open(server: Server): Promise<V1Client> {
    const ws = new WebSocket(`ws://127.0.0.1:${server.getPort()}/`, ['pkg.v1']);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const client = new V1Client(ws);
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    await client.find((m) => m.event === '$welcome');
    return client;
  }

  request(event: string, data: unknown, id: string): void {
    this.ws.send(JSON.stringify({ event, data, id }));
  }

  async find(test: (m: Message) => boolean): Promise<Message> {
    await waitFor(() => this.received.some(test), 'a message');
    return this.received.find(test)!;
  }

  close(): void {
    this.ws.close();
  }
}

describeRedis('history reads with the Redis adapter', () => {
  const keyPrefix = `reads-${randomBytes(6).toString('hex')}`;
  const admin = createClient({ url: 'redis://127.0.0.1:6379' });
  let a: Server;
  let b: Server;

  beforeAll(async () => {
    await admin.connect();
    const options = { room: 'r:*', size: 10, adapter: { keyPrefix } };
    a = await startHistoryServer(options);
    b = await startHistoryServer(options);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    const keys = await admin.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await admin.del(keys);
    await admin.quit();
  });

  const historyKeys = (): Promise<string[]> => admin.keys(`${keyPrefix}:hist:*`);

  it('leaves no key for rooms that never had a message, recovered or read', async () => {
    const client = await V1Client.open(a);
    for (let i = 0; i < 8; i += 1) {
      const room = `r:never-${i}`;
      client.request('join_room', { room, since: { offset: 3, epoch: 'made-up' } }, `j${i}`);
      const recovered = await client.find(
        (m) => m.event === '$recovered' && m.data['room'] === room,
      );
      expect(recovered.data).toMatchObject({ recovered: false, reason: 'epoch_changed' });
      client.request('$history', { room }, `h${i}`);
      const answer = await client.find((m) => m.id === `h${i}`);
      expect(answer.event).toBe('$history');
      expect(answer.data).toMatchObject({ messages: [], complete: true, position: { offset: 0 } });
    }
    expect(await historyKeys()).toEqual([]);
    client.close();
  });

  it('recovers a quiet room from its position on another instance, keys made only by messages', async () => {
    const room = 'r:quiet';
    const reader = await V1Client.open(a);
    reader.request('join_room', { room }, 'j');
    await reader.find((m) => m.id === 'j');
    reader.request('$history', { room }, 'h');
    const quiet = (await reader.find((m) => m.id === 'h')).data['position'] as {
      offset: number;
      epoch: string;
    };
    expect(quiet.offset).toBe(0);
    expect(await historyKeys()).toEqual([]);
    reader.close();

    for (let n = 1; n <= 3; n += 1) b.broadcast('msg', { n }, { room });
    await waitFor(async () => (await historyKeys()).length === 2, 'the room kept in Redis');
    for (const key of await historyKeys()) {
      const ttl = await admin.pTTL(key);
      expect(ttl).toBeGreaterThan(0);
    }

    const back = await V1Client.open(a);
    back.request('join_room', { room, since: quiet }, 'j');
    const recovered = await back.find((m) => m.event === '$recovered');
    expect(recovered.data).toMatchObject({ recovered: true, replayed: 3 });
    expect(back.received.filter((m) => m.event === 'msg').map((m) => m.data['n'])).toEqual([
      1, 2, 3,
    ]);
    back.close();
  });

  it('leaves a message out of the reads of the clients its broadcast left out', async () => {
    const room = 'r:except';
    const left = await V1Client.open(a);
    const other = await V1Client.open(b);
    const leftId = String(left.received[0]!.data['clientId']);
    for (const client of [left, other]) {
      client.request('join_room', { room }, 'j');
      await client.find((m) => m.id === 'j');
    }
    b.broadcast('msg', { n: 0 }, { room });
    const seen = await left.find((m) => m.event === 'msg' && m.data['n'] === 0);
    b.broadcast('msg', { n: 1 }, { room, except: leftId });
    const many = [leftId, ...Array.from({ length: MAX_KEPT_EXCEPT }, (_, i) => `gone-${i}`)];
    a.broadcast('msg', { n: 2 }, { room, except: many });
    a.broadcast('msg', { n: 3 }, { room });
    await left.find((m) => m.event === 'msg' && m.data['n'] === 3);
    await other.find((m) => m.event === 'msg' && m.data['n'] === 3);
    expect(left.received.filter((m) => m.event === 'msg').map((m) => m.data['n'])).toEqual([0, 3]);

    const numbersOf = (answer: Message): unknown[] =>
      (answer.data['messages'] as Message[]).map((m) => m.data['n']);
    left.request('$history', { room }, 'h1');
    const mine = await left.find((m) => m.id === 'h1');
    expect(numbersOf(mine)).toEqual([0, 3]);
    expect(mine.data).toMatchObject({ complete: false, reason: 'too_far_behind' });
    other.request('$history', { room }, 'h1');
    const theirs = await other.find((m) => m.id === 'h1');
    expect(numbersOf(theirs)).toEqual([0, 1, 3]);
    expect((await b.history(room)).messages.map((m) => (m.data as { n: number }).n)).toEqual([
      0, 1, 2, 3,
    ]);

    // A recovery from before them: the message left out is not replayed to that client, and
    // the one whose exclusion was too long to keep makes the recovery fail (nothing replayed).
    left.request('leave_room', { room }, 'l');
    await left.find((m) => m.id === 'l');
    left.request(
      'join_room',
      { room, since: { offset: seen.pos!.offset, epoch: seen.pos!.epoch } },
      'j2',
    );
    const recovered = await left.find((m) => m.event === '$recovered');
    expect(recovered.data).toMatchObject({ recovered: false, reason: 'too_far_behind' });
    expect(left.received.filter((m) => m.event === 'msg').map((m) => m.data['n'])).toEqual([0, 3]);
    left.close();
    other.close();
  });

  it('replays a recovery without the message its broadcast left the client out of', async () => {
    const room = 'r:except-replay';
    const left = await V1Client.open(a);
    const leftId = String(left.received[0]!.data['clientId']);
    left.request('join_room', { room }, 'j');
    await left.find((m) => m.id === 'j');
    b.broadcast('msg', { n: 0 }, { room });
    const seen = await left.find((m) => m.event === 'msg' && m.data['n'] === 0);
    b.broadcast('msg', { n: 1 }, { room, except: leftId });
    b.broadcast('msg', { n: 2 }, { room });
    await left.find((m) => m.event === 'msg' && m.data['n'] === 2);
    left.request('leave_room', { room }, 'l');
    await left.find((m) => m.id === 'l');
    left.request(
      'join_room',
      { room, since: { offset: seen.pos!.offset, epoch: seen.pos!.epoch } },
      'j2',
    );
    const recovered = await left.find((m) => m.event === '$recovered');
    expect(recovered.data).toMatchObject({ recovered: true, replayed: 1 });
    expect(left.received.filter((m) => m.event === 'msg').map((m) => m.data['n'])).toEqual([
      0, 2, 2,
    ]);
    left.close();
  });
});
