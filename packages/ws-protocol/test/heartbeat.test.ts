import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import type { WsClient } from '../src/index';
import { cleanup, closed, collector, openClient, rawWsClient, startServer } from './helpers';

afterEach(cleanup);

describe('heartbeat', () => {
  it('terminates a client that never answers pings; onDisconnect runs once', async () => {
    const ts = await startServer({ heartbeatInterval: 20, heartbeatTimeout: 20 });
    const gone = collector<{ id: string; code: number; reason: string }>();
    const clients = collector<WsClient>();
    ts.handler.onConnect(clients.push);
    ts.handler.onDisconnect((c, code, reason) => gone.push({ id: c.id, code, reason }));

    // `ws` answers pings by itself unless told not to.
    const ws = await openClient(ts.url, { autoPong: false });
    const client = await clients.next();
    const pinged = once(ws, 'ping');
    const done = closed(ws);

    await pinged;
    expect((await done).code).toBe(1006);
    expect(await gone.next()).toEqual({ id: client.id, code: 1006, reason: 'Heartbeat timeout' });
    expect(ts.handler.size).toBe(0);
    expect(ts.logger.withCode('PKG_ERR_WS_HEARTBEAT_TIMEOUT')).toHaveLength(1);
    expect(gone.items).toHaveLength(1);
  });

  it('terminates a raw client that ignores pings', async () => {
    const ts = await startServer({ heartbeatInterval: 10, heartbeatTimeout: 10 });
    const gone = collector<number>();
    ts.handler.onDisconnect((_c, code) => gone.push(code));
    const raw = await rawWsClient(ts.port);
    const rawClosed = once(raw.socket, 'close');
    await raw.nextFrame(0x9);
    expect(await gone.next()).toBe(1006);
    await rawClosed;
  });

  it('keeps a client that answers, ping after ping', async () => {
    const ts = await startServer({ heartbeatInterval: 10, heartbeatTimeout: 2000 });
    const gone = collector<number>();
    ts.handler.onDisconnect((_c, code) => gone.push(code));
    const ws = await openClient(ts.url);
    for (let i = 0; i < 5; i += 1) await once(ws, 'ping');
    expect(ws.readyState).toBe(ws.OPEN);
    expect(ts.handler.size).toBe(1);
    expect(gone.items).toHaveLength(0);
  });

  it('counts a pong from a raw client as alive', async () => {
    const ts = await startServer({ heartbeatInterval: 10, heartbeatTimeout: 2000 });
    const raw = await rawWsClient(ts.port);
    for (let i = 0; i < 3; i += 1) {
      const payload = await raw.nextFrame(0x9);
      raw.sendFrame(0xa, payload);
    }
    expect(ts.handler.size).toBe(1);
    expect(raw.socket.destroyed).toBe(false);
  });
});
