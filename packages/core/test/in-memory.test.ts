// server.connect(): a real `ws` client over an in-memory stream pair, through the server's
// handshake middleware, OnConnect, envelopes, schemas, rooms and OnDisconnect; no port.
import { describe, expect, it } from '@jest/globals';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import { NullLogger, Server, ServerConfig } from '../src/index';

function nextMessage(
  ws: WebSocket,
  event: string,
): Promise<{ event: string; data: Record<string, unknown> }> {
  return new Promise((resolve) => {
    const onMessage = (raw: Buffer): void => {
      const envelope = JSON.parse(String(raw)) as { event: string; data: Record<string, unknown> };
      if (envelope.event !== event) return;
      ws.off('message', onMessage);
      resolve(envelope);
    };
    ws.on('message', onMessage);
  });
}

function app(events: string[]): Server {
  const server = new Server(
    new ServerConfig({ port: 0, heartbeat_interval: 0 }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  server.addHandshakeMiddleware((ctx) => {
    const token = ctx.headers['authorization'];
    if (token !== 'Bearer ok') return { status: 401, message: 'no token' };
    ctx.data['user'] = 'ada';
    return undefined;
  });
  server
    .onConnect(function (clientId) {
      this.emit(clientId, 'welcome', {
        user: this.getServer().getClientData(clientId, 'user') as string,
      });
    })
    .onDisconnect((clientId) => void events.push(`gone ${clientId}`))
    .on(
      'join',
      function (clientId, data) {
        this.joinRoom(clientId, data.room);
        this.emit(clientId, 'joined', data);
      },
      { schema: z.object({ room: z.string().min(1) }) },
    )
    .on('say', function (clientId, data) {
      this.broadcast('said', data, { room: 'r', except: clientId });
    });
  return server;
}

describe('server.connect()', () => {
  it('runs handshake middleware, OnConnect, schemas, rooms and OnDisconnect without a port', async () => {
    const events: string[] = [];
    const server = app(events);
    await expect(server.connect()).rejects.toThrow(/refused with 401/);
    const headers = { authorization: 'Bearer ok' };
    const welcomeA = server
      .connect({ headers })
      .then(async (ws) => ({ ws, welcome: await nextMessage(ws, 'welcome') }));
    const { ws: a, welcome } = await welcomeA;
    expect(welcome.data).toEqual({ user: 'ada' });
    const b = await server.connect({ headers });
    a.send(JSON.stringify({ event: 'join', data: { room: '' } }));
    expect((await nextMessage(a, 'error')).data).toMatchObject({ code: 'validation_failed' });
    for (const ws of [a, b]) {
      ws.send(JSON.stringify({ event: 'join', data: { room: 'r' } }));
      await nextMessage(ws, 'joined');
    }
    const said = nextMessage(b, 'said');
    a.send(JSON.stringify({ event: 'say', data: { text: 'hi' } }));
    expect((await said).data).toEqual({ text: 'hi' });
    expect(server.getClientCount()).toBe(2);
    await new Promise<void>((resolve) => {
      a.once('close', () => resolve());
      a.close();
    });
    b.terminate();
    await new Promise<void>((resolve) => {
      const wait = (): void => void (events.length === 2 ? resolve() : setImmediate(wait));
      wait();
    });
    expect(events).toHaveLength(2);
    expect(server.getClientCount()).toBe(0);
  });
});

describe('server.connect() with protocol version 1', () => {
  interface Frame {
    event: string;
    data: unknown;
    id?: unknown;
    rid?: string;
  }

  function next(ws: WebSocket, event: string): Promise<Frame> {
    return new Promise((resolve) => {
      const onMessage = (raw: Buffer): void => {
        const frame = JSON.parse(String(raw)) as Frame;
        if (frame.event !== event) return;
        ws.off('message', onMessage);
        resolve(frame);
      };
      ws.on('message', onMessage);
    });
  }

  it('says $hello, answers requests from server.on handlers, and round-trips emitWithAck', async () => {
    const server = new Server(
      new ServerConfig({ port: 0, heartbeat_interval: 0, recovery_window: 0 }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    server
      .on('add', (_clientId, data) => data.a + data.b, {
        schema: z.object({ a: z.number(), b: z.number() }),
      })
      .on('later', async () => {
        await Promise.resolve();
        return { ok: true };
      });
    const ws = await server.connect();
    const welcome = next(ws, '$welcome');
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    const clientId = ((await welcome).data as { clientId: string }).clientId;
    expect(typeof clientId).toBe('string');

    const sum = next(ws, 'add');
    ws.send(JSON.stringify({ event: 'add', data: { a: 2, b: 3 }, id: 1 }));
    expect(await sum).toEqual({ event: 'add', id: 1, data: 5 });
    const later = next(ws, 'later');
    ws.send(JSON.stringify({ event: 'later', data: {}, id: 'q' }));
    expect(await later).toEqual({ event: 'later', id: 'q', data: { ok: true } });
    const refused = next(ws, 'error');
    ws.send(JSON.stringify({ event: 'add', data: { a: 'x', b: 3 }, id: 2 }));
    expect(await refused).toMatchObject({
      id: 2,
      data: { code: 'validation_failed', event: 'add', issues: [{ path: ['a'] }] },
    });

    const asked = next(ws, 'confirm');
    const answered = server.emitWithAck(clientId, 'confirm', { file: 'a.txt' });
    const request = await asked;
    expect(request).toMatchObject({ event: 'confirm', data: { file: 'a.txt' } });
    ws.send(JSON.stringify({ event: '$ack', rid: request.rid, data: { yes: true } }));
    await expect(answered).resolves.toEqual({ yes: true });

    const gone = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.close(1000);
    await gone;
  });
});
