import { afterEach, describe, expect, it } from '@jest/globals';
import type { WebSocket } from 'ws';
import type { Envelope, WsClient } from '../src/index';
import { guardLogger } from '../src/index';
import { cleanup, closed, collector, openClient, startServer } from './helpers';

afterEach(cleanup);

async function connected(options: Parameters<typeof startServer>[0] = {}) {
  const ts = await startServer(options);
  const clients = collector<WsClient>();
  const messages = collector<Envelope>();
  ts.handler.onConnect(clients.push);
  ts.handler.onMessage((_client, envelope) => messages.push(envelope));
  const ws = await openClient(ts.url);
  const client = await clients.next();
  return { ts, ws, client, messages };
}

/** Every message the client receives, parsed. */
function inbox(ws: WebSocket): Array<{ event: string; data: Record<string, unknown> }> {
  const got: Array<{ event: string; data: Record<string, unknown> }> = [];
  ws.on('message', (raw) => got.push(JSON.parse(String(raw))));
  return got;
}

describe('inbound budget', () => {
  it('closes with 1008 after repeated protocol errors, answering only the first of each code', async () => {
    const { ts, ws } = await connected({ maxProtocolErrors: 5 });
    const got = inbox(ws);
    const done = closed(ws);
    for (let i = 0; i < 50; i += 1) ws.send('not json');
    expect(await done).toEqual({ code: 1008, reason: 'Too many protocol errors' });
    expect(got.filter((m) => m.event === 'error')).toHaveLength(1);
    expect(got[0]?.data.code).toBe('invalid_json');
    expect(ts.logger.withCode('PKG_ERR_WS_TOO_MANY_PROTOCOL_ERRORS')).toHaveLength(1);
  });

  it('refuses messages over the per-second budget with too_many_messages', async () => {
    const { ws, messages } = await connected({ maxMessagesPerSecond: 5, maxProtocolErrors: 0 });
    const got = inbox(ws);
    for (let i = 0; i < 40; i += 1) ws.send(JSON.stringify({ event: 'n', data: { i } }));
    ws.send('{"event":"last","data":{}}');
    // The refusal reply comes after the burst (2 s worth: 10 messages) was used.
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (got.some((m) => m.data.code === 'too_many_messages')) resolve();
        else setTimeout(check, 5);
      };
      check();
    });
    expect(messages.items.length).toBeGreaterThanOrEqual(10);
    expect(messages.items.length).toBeLessThan(20);
    expect(messages.items.map((m) => (m.data as { i: number }).i)).toEqual([
      ...Array(messages.items.length).keys(),
    ]);
    expect(got.filter((m) => m.data.code === 'too_many_messages')).toHaveLength(1);
  });

  it('refuses JSON that is not an object without parsing it', async () => {
    const { ws } = await connected({ errorReplyInterval: 0 });
    const got = inbox(ws);
    for (const text of ['[1]', 'null', '42', '"x"', '{"event":', 'garbage']) ws.send(text);
    ws.send('{"event":"x","data":{}}');
    await new Promise<void>((resolve) => {
      const check = (): void => (got.length >= 6 ? resolve() : void setTimeout(check, 5));
      check();
    });
    expect(got.map((m) => m.data.code)).toEqual([
      'invalid_envelope',
      'invalid_envelope',
      'invalid_envelope',
      'invalid_envelope',
      'invalid_json',
      'invalid_json',
    ]);
  });
});

describe('fairness', () => {
  it('handles a burst in bounded batches, letting the event loop turn between them, in order', async () => {
    const { ws, messages } = await connected({ maxMessagesPerTurn: 4, maxMessagesPerSecond: 0 });
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const perTurn = new Map<number, number>();
    const seen: number[] = [];
    const all = new Promise<void>((resolve) => {
      const check = (): void => {
        if (seen.length === 60) resolve();
      };
      const push = messages.push;
      messages.push = (envelope) => {
        push(envelope);
        perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
        seen.push((envelope.data as { i: number }).i);
        check();
      };
    });
    for (let i = 0; i < 60; i += 1) ws.send(JSON.stringify({ event: 'n', data: { i } }));
    await all;
    ticking = false;
    expect(seen).toEqual([...Array(60).keys()]);
    // At most one batch in the poll phase and one in the check phase of a loop iteration.
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(8);
  });
});

describe('shutdown', () => {
  it('answers shutting_down to messages once the handler stops accepting, and does not deliver them', async () => {
    const { ts, ws, messages } = await connected();
    const got = inbox(ws);
    ts.handler.stopAccepting();
    ws.send('{"event":"late","data":{}}');
    await new Promise<void>((resolve) => {
      const check = (): void => (got.length >= 1 ? resolve() : void setTimeout(check, 5));
      check();
    });
    expect(got[0]).toEqual({
      event: 'error',
      data: { code: 'shutting_down', message: expect.stringMatching(/shutting down/) },
    });
    expect(messages.items).toHaveLength(0);
    expect(ts.handler.closing).toBe(true);
  });
});

describe('guardLogger', () => {
  it('turns a throwing logger into one that never throws', () => {
    const calls: string[] = [];
    const throwing = new Proxy(
      {},
      {
        get: (_t, name) => () => {
          calls.push(String(name));
          throw new Error('disk full');
        },
      },
    ) as Parameters<typeof guardLogger>[0];
    const original = console.error;
    console.error = () => undefined;
    try {
      const safe = guardLogger(throwing);
      expect(() => safe.error('x')).not.toThrow();
      expect(() => safe.exception(new Error('y'))).not.toThrow();
      expect(() => safe.log('info', 'z')).not.toThrow();
      expect(guardLogger(safe)).toBe(safe);
    } finally {
      console.error = original;
    }
    expect(calls).toEqual(['error', 'exception', 'log']);
  });
});
