// The `traceContext` option: what it returns travels as the envelope's `meta` of every emit
// (checked on a real `ws` server on 127.0.0.1 port 0, reading the raw frames), and a function
// that throws or returns something odd sends no meta, never stopping the message. That the
// server's span takes this meta as its parent is tested in @pkg/core (test/tracing.test.ts).
import { afterEach, describe, expect, it } from '@jest/globals';
import { WebSocketServer } from 'ws';
import { Client, type ClientOptions } from '../src/index';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const servers: WebSocketServer[] = [];
const clients: Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A raw server that records every text frame; a client of it (protocol version 0). */
async function setup(
  options: ClientOptions,
): Promise<{ client: Client; frames: () => Promise<unknown[]> }> {
  const received: unknown[] = [];
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  servers.push(wss);
  await new Promise((r) => wss.once('listening', r));
  wss.on('connection', (ws) => ws.on('message', (raw) => received.push(JSON.parse(String(raw)))));
  const { port } = wss.address() as { port: number };
  const client = new Client(`ws://127.0.0.1:${port}`, {
    protocol: 'basic',
    network: null,
    ...options,
  });
  clients.push(client);
  await client.connect();
  return {
    client,
    frames: async () => {
      for (let i = 0; i < 200 && received.length === 0; i++)
        await new Promise((r) => setTimeout(r, 5));
      return received;
    },
  };
}

describe('traceContext', () => {
  it('sends what it returns as meta, read at each emit', async () => {
    let tracestate: string | undefined = 'k=1';
    const { client, frames } = await setup({
      traceContext: () => ({ traceparent: TRACEPARENT, ...(tracestate ? { tracestate } : {}) }),
    });
    client.emit('a', { n: 1 });
    tracestate = undefined;
    client.emit('a', { n: 2 });
    await frames();
    await new Promise((r) => setTimeout(r, 50));
    expect(await frames()).toEqual([
      { event: 'a', data: { n: 1 }, meta: { traceparent: TRACEPARENT, tracestate: 'k=1' } },
      { event: 'a', data: { n: 2 }, meta: { traceparent: TRACEPARENT } },
    ]);
  });

  it('sends no meta without the option, when it returns undefined, throws or returns junk', async () => {
    const sources: Array<ClientOptions['traceContext']> = [
      undefined,
      () => undefined,
      () => {
        throw new Error('no context');
      },
      () => ({ traceparent: 5 }) as unknown as { traceparent: string },
      () => ({ traceparent: 'x'.repeat(500) }),
    ];
    for (const traceContext of sources) {
      const { client, frames } = await setup(traceContext ? { traceContext } : {});
      client.emit('b', { ok: true });
      expect(await frames()).toEqual([{ event: 'b', data: { ok: true } }]);
    }
  });

  it('refuses a traceContext that is not a function, naming the option', () => {
    expect(
      () =>
        new Client('ws://127.0.0.1:1', {
          traceContext: 'x' as unknown as ClientOptions['traceContext'],
        }),
    ).toThrow(/traceContext must be a function/);
  });
});
