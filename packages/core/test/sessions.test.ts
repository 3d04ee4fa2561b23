// Recovery sessions over real sockets: away sessions bounded per address and in all and
// counted in getLoad(), resumes bound to the identity the auth handlers gave, the token
// rotated on every resume, a resume taking a session over from a connection still thought
// alive (close 4409), why a resume was refused, and seq scoped to a session.
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  OnConnect,
  SocketController,
  type AuthContext,
  type AuthResult,
  type Server,
  type ServerConfigOptions,
} from '../src/index';
import {
  ConnectionRecorder,
  TestClient,
  cleanup,
  deferred,
  startServer,
  type Envelope,
} from './helpers';
import { maskedFrame } from './protocol-conformance-kit';

afterEach(cleanup);

interface Message extends Envelope {
  seq?: number;
}

/** Records OnConnect and OnDisconnect (the shared recorder, named for these tests). */
class App extends ConnectionRecorder {}

async function setup(
  config: ServerConfigOptions = {},
  prepare?: (server: Server) => void,
): Promise<{ server: Server; app: App; url: string }> {
  const app = new App();
  const { server, wsUrl } = await startServer([app], { shutdown_timeout: 200, ...config }, prepare);
  return { server, app, url: wsUrl };
}

async function hello(
  url: string,
  data: Record<string, unknown> = { v: 1 },
): Promise<{ client: TestClient; welcome: Record<string, unknown> }> {
  const client = await TestClient.connect(url, {}, ['pkg.v1']);
  client.sendRaw(JSON.stringify({ event: '$hello', data }));
  const first = await client.next();
  expect(first.event).toBe('$welcome');
  return { client, welcome: first.data };
}

/** Drops the TCP connection (no close frame) and waits until the server saw it. */
async function drop(server: Server, client: TestClient): Promise<void> {
  const open = server.getLoad().openClients;
  client.ws.terminate();
  await client.closed;
  for (let i = 0; i < 300 && server.getLoad().openClients >= open; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const byAuth =
  (seen: AuthContext[] = []) =>
  (server: Server) =>
    server.addAuthHandler((ctx): AuthResult => {
      seen.push(ctx);
      return ctx.auth === 'alice' || ctx.auth === 'bob' ? { identity: ctx.auth } : false;
    });

describe('away sessions are bounded and counted', () => {
  it('keeps at most max_connections_per_ip away sessions per address, ending the oldest', async () => {
    const { url, server, app } = await setup({ max_connections_per_ip: 2 });
    const tokens: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const { client, welcome } = await hello(url);
      tokens.push(welcome['session'] as string);
      ids.push(welcome['clientId'] as string);
      await drop(server, client);
    }
    const load = server.getLoad();
    expect(load.awaySessions).toBe(2);
    expect(load.sessions).toBe(2);
    expect(load.sessionBytes).toBeGreaterThan(0);
    expect(app.disconnects).toEqual(ids.slice(0, 2));
    const late = await hello(url, { v: 1, resume: { session: tokens[0], seq: 0 } });
    expect(late.welcome).toMatchObject({ resumed: false, reason: 'ended' });
    const kept = await hello(url, { v: 1, resume: { session: tokens[3], seq: 0 } });
    expect(kept.welcome).toMatchObject({ resumed: true, clientId: ids[3] });
  });

  it('counts IPv6 addresses by their ipv6_subnet network for the per-address bound, as the connection caps do', async () => {
    const from = (address: string) => ({ headers: { 'X-Forwarded-For': address } });
    const helloFrom = async (url: string, address: string) => {
      const client = await TestClient.connect(url, from(address), ['pkg.v1']);
      client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
      const welcome = await client.next('$welcome');
      return { client, clientId: welcome.data['clientId'] as string };
    };
    const { url, server, app } = await setup({
      max_away_sessions_per_ip: 1,
      trust_proxy: ['loopback'],
    });
    const a = await helloFrom(url, '2001:db8:1:2::1');
    const b = await helloFrom(url, '2001:db8:1:2::beef');
    const other = await helloFrom(url, '2001:db8:1:3::1');
    for (const c of [a, b, other]) await drop(server, c.client);
    // One /64: the second away session pushed the first out; another /64 counts apart.
    expect(server.getLoad().awaySessions).toBe(2);
    expect(app.disconnects).toEqual([a.clientId]);

    const exact = await setup({
      max_away_sessions_per_ip: 1,
      trust_proxy: ['loopback'],
      ipv6_subnet: 128,
    });
    const c = await helloFrom(exact.url, '2001:db8:1:2::1');
    const d = await helloFrom(exact.url, '2001:db8:1:2::2');
    for (const x of [c, d]) await drop(exact.server, x.client);
    expect(exact.server.getLoad().awaySessions).toBe(2);
    expect(exact.app.disconnects).toEqual([]);
  });

  it('keeps at most max_away_sessions in all', async () => {
    const { url, server, app } = await setup({ max_away_sessions: 1 });
    const a = await hello(url);
    const b = await hello(url);
    await drop(server, a.client);
    await drop(server, b.client);
    expect(server.getLoad()).toMatchObject({ awaySessions: 1, openClients: 0 });
    expect(app.disconnects).toEqual([a.welcome['clientId']]);
  });

  it('takes the new keys, and refuses bad values with a TypeError that names them', async () => {
    const { server } = await setup({ max_away_sessions: 0, max_away_sessions_per_ip: 3 });
    expect(server.getConfig().get('max_away_sessions_per_ip')).toBe(3);
    await expect(setup({ max_away_sessions: -1 })).rejects.toThrow(/max_away_sessions/);
    await expect(setup({ max_away_sessions_per_ip: 'x' as unknown as number })).rejects.toThrow(
      /max_away_sessions_per_ip/,
    );
  });
});

describe('resume, identity and the session token', () => {
  it('refuses a resume under another identity without touching the session, and rotates the token', async () => {
    const seen: AuthContext[] = [];
    const { url, server } = await setup({}, byAuth(seen));
    const alice = await hello(url, { v: 1, auth: 'alice' });
    const aliceId = alice.welcome['clientId'] as string;
    const token = alice.welcome['session'] as string;
    await drop(server, alice.client);

    const bob = await hello(url, { v: 1, auth: 'bob', resume: { session: token, seq: 0 } });
    expect(bob.welcome).toMatchObject({ resumed: false, reason: 'identity' });
    expect(bob.welcome['clientId']).not.toBe(aliceId);
    expect(seen.at(-1)?.resume).toEqual({ clientId: aliceId, identity: 'alice' });

    const back = await hello(url, { v: 1, auth: 'alice', resume: { session: token, seq: 0 } });
    expect(back.welcome).toMatchObject({ resumed: true, clientId: aliceId });
    const rotated = back.welcome['session'] as string;
    expect(typeof rotated).toBe('string');
    expect(rotated).not.toBe(token);
    await drop(server, back.client);
    const stale = await hello(url, { v: 1, auth: 'alice', resume: { session: token, seq: 0 } });
    expect(stale.welcome).toMatchObject({ resumed: false, reason: 'unknown' });
    const fresh = await hello(url, { v: 1, auth: 'alice', resume: { session: rotated, seq: 0 } });
    expect(fresh.welcome).toMatchObject({ resumed: true, clientId: aliceId });
  });

  it('takes a session over from a connection still thought alive: the old one gets 4409', async () => {
    const { url, server, app } = await setup();
    const first = await hello(url);
    const id = first.welcome['clientId'] as string;
    const taken = await hello(url, {
      v: 1,
      resume: { session: first.welcome['session'], seq: 0 },
    });
    expect(taken.welcome).toMatchObject({ resumed: true, clientId: id });
    expect(await first.client.closed).toEqual({ code: 4409, reason: 'session taken over' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(app.connects).toEqual([id]);
    expect(app.disconnects).toEqual([]);
    expect(server.getClientCount()).toBe(1);
    expect(server.send(id, 'after', { n: 1 })).toBe(true);
    expect((await taken.client.next('after')).data).toEqual({ n: 1 });
  });

  it('tells a resume of a session that ended "ended", not "unknown"', async () => {
    const { url, server } = await setup();
    const a = await hello(url);
    server.disconnectClient(a.welcome['clientId'] as string);
    await a.client.closed;
    const back = await hello(url, { v: 1, resume: { session: a.welcome['session'], seq: 0 } });
    expect(back.welcome).toMatchObject({ resumed: false, reason: 'ended' });
  });

  it('starts seq at 1 in every new session', async () => {
    const { url, server } = await setup();
    const a = await hello(url);
    server.broadcast('news', { n: 1 });
    server.broadcast('news', { n: 2 });
    expect(((await a.client.next('news')) as Message).seq).toBe(1);
    expect(((await a.client.next('news')) as Message).seq).toBe(2);
    const b = await hello(url);
    server.broadcast('news', { n: 3 });
    expect(((await b.client.next('news')) as Message).seq).toBe(1);
    expect(((await a.client.next('news')) as Message).seq).toBe(3);
  });
});

describe('small protocol rules', () => {
  it('says $welcome.data.auth "unused" when $hello.auth was sent and no auth handler checked it', async () => {
    const { url } = await setup();
    expect((await hello(url, { v: 1, auth: 'token' })).welcome['auth']).toBe('unused');
    expect((await hello(url)).welcome).not.toHaveProperty('auth');
    const checked = await setup({}, byAuth());
    expect((await hello(checked.url, { v: 1, auth: 'bob' })).welcome).not.toHaveProperty('auth');
  });

  it('accepts $ack without data (null) and bounds the $nack text copied into the error', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await hello(url);
    const id = welcome['clientId'] as string;
    const answered = server.emitWithAck(id, 'ask', {});
    const ask = (await client.next('ask')) as Envelope & { rid: string };
    client.sendRaw(JSON.stringify({ event: '$ack', rid: ask.rid }));
    await expect(answered).resolves.toBeNull();

    const refused = server.emitWithAck(id, 'ask', {});
    const again = (await client.next('ask')) as Envelope & { rid: string };
    client.sendRaw(
      JSON.stringify({
        event: '$nack',
        rid: again.rid,
        data: { code: 'c'.repeat(5000), message: 'm'.repeat(100_000) },
      }),
    );
    const err = (await refused.catch((e: unknown) => e)) as Error & { remoteCode: string };
    expect(err.message.length).toBeLessThan(500);
    expect(err.remoteCode.length).toBeLessThanOrEqual(64);
  });
});

// docs/protocol.md, "Connection state recovery": the session column of the close tables.
describe('the closes that keep a session, and those that end it', () => {
  /** Waits until the server holds `n` away sessions. */
  async function away(server: Server, n: number): Promise<void> {
    for (let i = 0; i < 300 && server.getLoad().awaySessions < n; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(server.getLoad().awaySessions).toBe(n);
  }

  const rawSocket = (client: TestClient): Socket =>
    (client.ws as unknown as { _socket: Socket })._socket;

  const breakers: Array<[number, string, ServerConfigOptions, (client: TestClient) => void]> = [
    [
      1009,
      'a message over max_message_size',
      { max_message_size: 1024 },
      (c) => c.sendRaw(JSON.stringify({ event: 'big', data: { text: 'x'.repeat(4096) } })),
    ],
    [
      1003,
      'a binary frame with ws_binary_messages "close"',
      { ws_binary_messages: 'close', ws_binary_frames: false },
      (c) => c.ws.send(Buffer.from([1, 2, 3]), { binary: true }),
    ],
    [
      1007,
      'a text frame that is not UTF-8',
      {},
      (c) => c.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false }),
    ],
    [
      1002,
      'a frame with a reserved opcode',
      {},
      (c) => rawSocket(c).write(maskedFrame(3, Buffer.alloc(0))),
    ],
  ];

  it.each(breakers)(
    'keeps it after %i (%s): the resume is granted',
    async (code, _what, config, breakIt) => {
      const { url, server, app } = await setup(config);
      const first = await hello(url);
      const id = first.welcome['clientId'] as string;
      server.send(id, 'kept', { n: 1 });
      await first.client.next('kept');
      breakIt(first.client);
      const closed = await first.client.closed;
      // The server sent the code; a client may see only the end of the TCP connection.
      expect([code, 1006]).toContain(closed.code);
      await away(server, 1);
      expect(app.disconnects).toEqual([]);
      const back = await hello(url, {
        v: 1,
        resume: { session: first.welcome['session'], seq: 1 },
      });
      expect(back.welcome).toMatchObject({ resumed: true, clientId: id });
      expect(app.connects).toEqual([id]);
    },
  );

  it('ends it after 1011 (OnConnect did not finish): the resume is told "ended"', async () => {
    const stuck = deferred();
    class Slow extends SocketController {
      @OnConnect()
      wait(): Promise<void> {
        return stuck.promise;
      }
    }
    const { server, wsUrl } = await startServer([new Slow()], {
      shutdown_timeout: 200,
      connect_timeout: 50,
    });
    const first = await hello(wsUrl);
    expect((await first.client.closed).code).toBe(1011);
    stuck.resolve();
    expect(server.getLoad().awaySessions).toBe(0);
    const back = await hello(wsUrl, {
      v: 1,
      resume: { session: first.welcome['session'], seq: 0 },
    });
    expect(back.welcome).toMatchObject({ resumed: false, reason: 'ended' });
  });

  it('moves it after 4409: the session lives on in the connection that resumed it', async () => {
    const { url, server, app } = await setup();
    const first = await hello(url);
    const id = first.welcome['clientId'] as string;
    const taken = await hello(url, { v: 1, resume: { session: first.welcome['session'], seq: 0 } });
    expect((await first.client.closed).code).toBe(4409);
    // Not away, not ended: the new connection holds it, and a drop of that one keeps it.
    expect(server.getLoad().awaySessions).toBe(0);
    expect(server.isConnected(id)).toBe(true);
    taken.client.ws.terminate();
    await away(server, 1);
    const again = await hello(url, { v: 1, resume: { session: taken.welcome['session'], seq: 0 } });
    expect(again.welcome).toMatchObject({ resumed: true, clientId: id });
    expect(app.disconnects).toEqual([]);
  });
});

describe('$welcome and what may come before it', () => {
  it('answers a $ping sent before $welcome with $pong first, then $welcome', async () => {
    const gate = deferred<AuthResult>();
    const { url } = await setup({}, (server) => server.addAuthHandler(() => gate.promise));
    const client = await TestClient.connect(url, {}, ['pkg.v1']);
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'alice' } }));
    client.sendRaw(JSON.stringify({ event: '$ping', data: {} }));
    expect(await client.next()).toEqual({ event: '$pong', data: {} });
    gate.resolve(true);
    const welcome = await client.next();
    expect(welcome.event).toBe('$welcome');
    expect(welcome.data).not.toHaveProperty('auth');
  });

  it('says auth "unused" only when $hello carried auth that no handler saw', async () => {
    const seen: Array<string | undefined> = [];
    const { url } = await setup({ hello_wait: 0 }, (server) =>
      server.addAuthHandler((ctx) => {
        seen.push(ctx.auth);
        return true;
      }),
    );
    // hello_wait 0: served as version 0 at once (the handler ran without auth), then $hello.
    const late = await TestClient.connect(url, {}, ['pkg.v1']);
    late.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'token' } }));
    const welcome = await late.next('$welcome');
    expect(welcome.data['auth']).toBe('unused');
    expect(seen).toEqual([undefined]);
    const bare = await TestClient.connect(url, {}, ['pkg.v1']);
    bare.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    expect((await bare.next('$welcome')).data).not.toHaveProperty('auth');
  });
});
