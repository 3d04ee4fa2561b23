// The version of a connection is settled in the handshake: the client offers the
// subprotocol pkg.v1 (not with protocol "basic"); a server that selects it gets `$hello`, a
// server that does not is spoken to in version 0 at once, without `$hello` and without
// waiting. The partners are the real @pkg/core Server and a plain `ws` server that answers
// like a server without protocol version 1.
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import WebSocket, { WebSocketServer } from 'ws';
import type { ClientError, WebSocketConstructor } from '../src/index';
import { Recorder, cleanup, makeClient, next } from './helpers';
import { V1Server } from './v1-server';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanup();
  for (const stop of stops.splice(0)) await stop();
});

interface PlainServer {
  url: string;
  /** The Sec-WebSocket-Protocol header of every handshake (undefined: none offered). */
  offered: Array<string | undefined>;
  /** Events received from clients, in order. */
  events: string[];
}

/**
 * A server without protocol version 1: it selects no subprotocol, greets every client at
 * once (its OnConnect) and answers `$hello` with `invalid_event`, as such a server does.
 */
async function startPlainServer(
  handleProtocols: (offered: Set<string>) => string | false = () => false,
): Promise<PlainServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols });
  const plain: PlainServer = { url: '', offered: [], events: [] };
  wss.on('headers', (_headers: string[], req: IncomingMessage) => {
    plain.offered.push(req.headers['sec-websocket-protocol']);
  });
  wss.on('connection', (ws) => {
    ws.send(JSON.stringify({ event: 'greeting', data: { text: 'hi' } }));
    ws.on('message', (raw) => {
      const { event } = JSON.parse(String(raw)) as { event: string };
      plain.events.push(event);
      if (!/^[A-Za-z0-9._-]+$/.test(event)) {
        ws.send(
          JSON.stringify({
            event: 'error',
            data: { code: 'invalid_event', message: 'Invalid event name.' },
          }),
        );
      }
    });
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  plain.url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  stops.push(
    () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  );
  return plain;
}

describe('the subprotocol pkg.v1', () => {
  it('is offered and selected by the server, which then gets $hello', async () => {
    const server = await V1Server.start();
    stops.push(() => server.close());
    const client = makeClient(server.url);
    await client.connect();
    expect(client.protocol).toBe(1);
    const socket = server.server.clients.get(client.id!)?.socket;
    expect(socket?.protocol).toBe('pkg.v1');
    expect(server.hellos).toHaveLength(1);
  });

  it('is not offered with protocol "basic"', async () => {
    const plain = await startPlainServer();
    const client = makeClient(plain.url, { protocol: 'basic' });
    const greeting = next(client, 'greeting');
    await client.connect();
    expect(await greeting).toEqual({ text: 'hi' });
    expect(plain.offered).toEqual([undefined]);
  });
});

describe('a server that does not select pkg.v1', () => {
  it('gets version 0 at once: no $hello, no error, the greeting delivered (ws refuses the first handshake)', async () => {
    const plain = await startPlainServer();
    const client = makeClient(plain.url);
    const errors = new Recorder<ClientError>();
    client.on('connect_error', errors.push);
    const greeting = next(client, 'greeting');
    await client.connect();
    expect(client.protocol).toBe(0);
    expect(await greeting).toEqual({ text: 'hi' });
    client.emit('note', { n: 1 });
    await new Promise<void>((resolve) => {
      const poll = (): void => (plain.events.length > 0 ? resolve() : void setImmediate(poll));
      poll();
    });
    expect(plain.events).toEqual(['note']);
    // `ws` fails a handshake that selects none of the offered subprotocols; the client
    // connects again at once without offering it.
    expect(plain.offered).toEqual(['pkg.v1', undefined]);
    expect(errors.items).toEqual([]);
  });

  it('gets version 0 at once with an implementation that accepts no subprotocol (as browsers do)', async () => {
    const plain = await startPlainServer();
    // A browser opens even though the server selected nothing; `ws` cannot be told to, so
    // this one drops the offer: the client sees what a browser reports then, protocol ''.
    class Lenient extends WebSocket {
      constructor(url: string) {
        super(url);
      }
    }
    const client = makeClient(plain.url, {
      WebSocket: Lenient as unknown as WebSocketConstructor,
    });
    const greeting = next(client, 'greeting');
    await client.connect();
    expect(client.protocol).toBe(0);
    expect(await greeting).toEqual({ text: 'hi' });
    expect(plain.offered).toEqual([undefined]);
    expect(plain.events).toEqual([]);
  });

  it('still falls back on invalid_event when a server selects pkg.v1 without speaking it', async () => {
    // `ws`'s own default: the first subprotocol offered, whatever it is.
    const plain = await startPlainServer((offered) => [...offered][0] ?? false);
    const client = makeClient(plain.url);
    const greeting = next(client, 'greeting');
    await client.connect();
    expect(client.protocol).toBe(0);
    expect(await greeting).toEqual({ text: 'hi' });
    expect(plain.offered).toEqual(['pkg.v1']);
    expect(plain.events).toEqual(['$hello']);
  });
});
