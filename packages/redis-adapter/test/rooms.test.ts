// Rooms over a real Redis (a private redis-server on a free port, so that its command
// counters are ours alone) and real sockets, with servers in this process: malformed room
// names never reach Redis, the room cap bounds the subscriptions one client can cause, a
// channel lingers for unsubscribeGrace after its last member leaves, and new subscriptions
// per client are bounded by maxSubscribesPerSecond.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  NullLogger,
  OnDisconnect,
  RoomsController,
  Server,
  ServerConfig,
  SocketController,
  SocketOn,
  type ServerConfigOptions,
} from '@pkg/core';
import { RedisAdapter, type RedisAdapterOptions } from '../src/index';
import { RedisUnderTest, V1Client, waitFor, redisServerAvailableSync } from './helpers';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter rooms test');
const describeRedis = hasRedisServer ? describe : describe.skip;

class AppController extends SocketController {
  readonly disconnects: string[] = [];

  @SocketOn('whoami')
  whoami(clientId: string): string {
    this.getServer().setClientData(clientId, 'user', 'ann');
    return clientId;
  }

  @SocketOn('enter')
  enter(clientId: string, data: unknown): boolean {
    return this.joinRoom(clientId, (data as { room: string }).room);
  }

  @OnDisconnect()
  gone(clientId: string): void {
    this.disconnects.push(clientId);
  }
}

describeRedis('RedisAdapter rooms', () => {
  const env = new RedisUnderTest();
  const servers: Server[] = [];
  const clients: V1Client[] = [];
  let prefixes = 0;

  beforeAll(() => env.start());

  afterEach(async () => {
    for (const c of clients.splice(0)) c.ws.terminate();
    for (const s of servers.splice(0)) await s.close();
  });

  afterAll(() => env.stop());

  async function start(
    adapterOptions: RedisAdapterOptions = {},
    config: ServerConfigOptions = {},
    keyPrefix = `rooms${(prefixes += 1)}`,
  ): Promise<{ server: Server; adapter: RedisAdapter; app: AppController; url: string }> {
    const server = new Server(
      new ServerConfig({
        host: '127.0.0.1',
        port: 0,
        heartbeat_interval: 0,
        // The tests send hundreds of joins at once; the inbound budget is not what they test.
        ws_max_messages_per_second: 0,
        ...config,
      }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    const adapter = new RedisAdapter({ url: env.redis.url, keyPrefix, ...adapterOptions });
    const app = new AppController();
    server.setAdapter(adapter);
    server.registerController(app);
    server.registerController(new RoomsController());
    await server.run();
    await adapter.ready();
    servers.push(server);
    return { server, adapter, app, url: `ws://127.0.0.1:${server.getPort()}/` };
  }

  async function connect(url: string): Promise<{ client: V1Client; id: string }> {
    const client = await V1Client.open(url);
    clients.push(client);
    client.request('whoami', {}, 'who');
    const id = (await client.answer('who')).data as unknown as string;
    return { client, id };
  }

  /** Calls of a Redis command since the server started (INFO commandstats). */
  async function calls(command: string): Promise<number> {
    const info = await env.admin.info('commandstats');
    const match = new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info);
    return match ? Number(match[1]) : 0;
  }

  it('refuses a room name with a lone surrogate before anything changes; the client leaves nothing behind', async () => {
    const { server, adapter, app, url } = await start({ unsubscribeGrace: 0 });
    const { client, id } = await connect(url);
    client.request('join_room', { room: 'x\ud800' }, 1);
    expect(await client.answer(1)).toMatchObject({
      event: 'error',
      data: { code: 'invalid_payload', room: 'x\ud800' },
    });
    client.request('enter', { room: 'y\udc00' }, 2);
    expect(await client.answer(2)).toMatchObject({
      event: 'error',
      data: { code: 'invalid_payload', room: 'y\udc00' },
    });
    expect(server.getNamespaceManager().getRoomsForClient(id)).toEqual([]);
    expect(() => server.broadcast('news', {}, '/', 'x\ud800')).not.toThrow();
    client.request('join_room', { room: 'fine' }, 3);
    expect(await client.answer(3)).toMatchObject({ event: 'join_room' });
    await adapter.synced();
    expect(adapter.stats().subscriptions).toBe(3 + 2); // fixed + namespace "/" + room "fine"

    client.ws.close(1000);
    await client.closed;
    await waitFor(() => app.disconnects.length > 0, 'OnDisconnect to run');
    expect(app.disconnects).toEqual([id]);
    expect(server.clientData.has(id)).toBe(false);
    await adapter.synced();
    expect(adapter.stats()).toMatchObject({ subscriptions: 3, lingering: 0 });
  });

  it('bounds the subscriptions of one client by max_rooms_per_client', async () => {
    const { adapter, url } = await start({ maxSubscribesPerSecond: 0 });
    const { client } = await connect(url);
    for (let i = 0; i < 300; i += 1) client.request('join_room', { room: `r${i}` }, i);
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => client.answer(i)));
    const refused = answers.filter((a) => a.event === 'error');
    expect(refused).toHaveLength(300 - 128);
    expect(refused.every((a) => a.data['code'] === 'too_many_rooms')).toBe(true);
    await adapter.synced();
    expect(adapter.stats().subscriptions).toBe(3 + 1 + 128);
    const numsub = await env.admin.pubSubNumSub(`rooms${prefixes}:room:%2F:r200`);
    expect(Object.values(numsub)).toEqual([0]);
  });

  it('keeps a channel for unsubscribeGrace, so hopping between rooms costs no SUBSCRIBE/UNSUBSCRIBE pair per hop', async () => {
    const { adapter, url } = await start({ unsubscribeGrace: 1500, maxSubscribesPerSecond: 0 });
    const { client } = await connect(url);
    await adapter.synced();
    const subscribes = await calls('subscribe');
    const unsubscribes = await calls('unsubscribe');
    client.request('join_room', { room: 'a' }, 'first');
    await client.answer('first');
    for (let i = 0; i < 100; i += 1) {
      const [from, to] = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
      client.request('leave_room', { room: from });
      client.request('join_room', { room: to }, i);
      await client.answer(i);
    }
    await adapter.synced();
    expect((await calls('subscribe')) - subscribes).toBe(2);
    expect((await calls('unsubscribe')) - unsubscribes).toBe(0);
    // The room left last lingers, then goes; the one the client is in stays.
    expect(adapter.stats()).toMatchObject({ subscriptions: 3 + 1 + 2, lingering: 1 });
    await waitFor(() => adapter.stats().lingering === 0, 'the grace to run out');
    await adapter.synced();
    expect(adapter.stats().subscriptions).toBe(3 + 1 + 1);
    expect((await calls('unsubscribe')) - unsubscribes).toBe(1);
  });

  it('delivers to a member who came back within the grace, exactly once', async () => {
    const prefix = `shared${(prefixes += 1)}`;
    const a = await start({}, {}, prefix);
    const b = await start({}, {}, prefix);
    const { client: bc } = await connect(b.url);
    bc.request('join_room', { room: 'r' }, 1);
    await bc.answer(1);
    bc.request('leave_room', { room: 'r' }, 2);
    await bc.answer(2);
    bc.request('join_room', { room: 'r' }, 3);
    await bc.answer(3);
    await b.adapter.synced();
    a.server.broadcast('news', { n: 1 }, '/', 'r');
    await bc.next((m) => m.event === 'news');
    bc.request('whoami', {}, 'marker');
    await bc.answer('marker');
    expect(bc.received.filter((m) => m.event === 'news')).toHaveLength(1);
  });

  it('refuses a join asked by another instance past the room cap without throwing in the subscriber', async () => {
    const prefix = `remote${(prefixes += 1)}`;
    const a = await start({}, { max_rooms_per_client: 1 }, prefix);
    const b = await start({}, { max_rooms_per_client: 1 }, prefix);
    const { client: bc, id } = await connect(b.url);
    bc.request('join_room', { room: 'mine' }, 1);
    await bc.answer(1);
    // What server.joinRoom does for a client of another instance; B answers once it tried.
    await expect(
      a.adapter.forward({ type: 'joinRoom', clientId: id, room: 'theirs', namespace: '/' }),
    ).resolves.toBe(true);
    // B refused it (the cap), kept the client's one room, and still serves it.
    expect(b.server.getNamespaceManager().getRoomsForClient(id)).toEqual(['mine']);
    bc.request('whoami', {}, 'still');
    expect(await bc.answer('still')).toMatchObject({ event: 'whoami' });
  });

  it('refuses joins that need new subscriptions past maxSubscribesPerSecond (rate_limited with retryAfter)', async () => {
    const { adapter, url } = await start(); // defaults: 10 per second, bursts of 20
    const { client } = await connect(url);
    await adapter.synced();
    const subscribes = await calls('subscribe');
    const unsubscribes = await calls('unsubscribe');
    const started = Date.now();
    // One room at a time, a new name each time, as a client hopping through rooms does.
    for (let i = 0; i < 150; i += 1) {
      if (i > 0) client.request('leave_room', { room: `n${i - 1}` });
      client.request('join_room', { room: `n${i}` }, i);
    }
    const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => client.answer(i)));
    const elapsed = (Date.now() - started) / 1000;
    await adapter.synced();
    const refused = answers.filter((a) => a.event === 'error');
    const accepted = answers.length - refused.length;
    expect(accepted).toBeGreaterThanOrEqual(20);
    expect(accepted).toBeLessThanOrEqual(20 + Math.ceil(10 * elapsed) + 1);
    expect(refused[0]).toMatchObject({
      data: {
        code: 'rate_limited',
        room: expect.any(String),
        namespace: '/',
        retryAfter: 1,
        message: expect.stringMatching(/maxSubscribesPerSecond/),
      },
    });
    expect(refused.every((a) => a.data['code'] === 'rate_limited')).toBe(true);
    expect(adapter.stats().refusedJoins).toBe(refused.length);
    expect((await calls('subscribe')) - subscribes).toBe(accepted);
    // UNSUBSCRIBEs wait for the grace (1 s): none yet unless the run itself took that long.
    expect((await calls('unsubscribe')) - unsubscribes).toBeLessThan(accepted);
    // The budget refills: after a second the client may join a new room again.
    await new Promise((r) => setTimeout(r, 1100));
    client.request('join_room', { room: 'later' }, 'later');
    expect(await client.answer('later')).toMatchObject({ event: 'join_room' });
  });
});
