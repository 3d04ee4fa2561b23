import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import type { WebSocket } from 'ws';
import type { WsClient } from '../src/index';
import { cleanup, collector, openClient, rawWsClient, startServer } from './helpers';

afterEach(cleanup);

/** Resolves with the first `count` texts the client receives. */
function receive(ws: WebSocket, count: number): Promise<string[]> {
  const texts: string[] = [];
  return new Promise((resolve) => {
    ws.on('message', (raw) => {
      texts.push(String(raw));
      if (texts.length === count) resolve(texts);
    });
  });
}

describe('a burst of broadcasts sent in one tick', () => {
  it('reaches every client complete and in order, and the clients stay open', async () => {
    const ts = await startServer();
    const clients = collector<WsClient>();
    ts.handler.onConnect(clients.push);
    const sockets = [await openClient(ts.url), await openClient(ts.url), await openClient(ts.url)];
    const ids = [(await clients.next()).id, (await clients.next()).id, (await clients.next()).id];
    const burst = 500;
    // The first client also gets the `solo` broadcast below.
    const received = sockets.map((ws, n) => receive(ws, n === 0 ? burst + 1 : burst));

    // All in the same tick: every client's frames are held, then flushed in one write.
    for (let i = 0; i < burst; i += 1) {
      expect(ts.handler.sendToMany(ids, ts.handler.prepareMessage('tick', { i }))).toBe(3);
    }
    // A broadcast to only some clients in the same tick keeps its place for those.
    expect(ts.handler.sendToMany([ids[0]!], ts.handler.prepareMessage('solo', {}))).toBe(1);

    const all = await Promise.all(received);
    for (const texts of all) {
      const ticks = texts.slice(0, burst).map((t) => JSON.parse(t) as { data: { i: number } });
      expect(ticks.map((m) => m.data.i)).toEqual(Array.from({ length: burst }, (_, i) => i));
    }
    expect(JSON.parse(all[0]![burst]!)).toMatchObject({ event: 'solo' });
    for (const ws of sockets) expect(ws.readyState).toBe(ws.OPEN);
    // A later tick starts a new batch.
    const next = receive(sockets[1]!, 1);
    expect(ts.handler.sendToMany([ids[1]!], ts.handler.prepareMessage('later', {}))).toBe(1);
    expect(JSON.parse((await next)[0]!)).toMatchObject({ event: 'later' });
  });

  it('still drops a client that does not read once the burst passes its send limit', async () => {
    const ts = await startServer({ maxBufferedAmount: 128 * 1024, closeTimeout: 50 });
    const clients = collector<WsClient>();
    const gone = collector<{ id: string; code: number }>();
    ts.handler.onConnect(clients.push);
    ts.handler.onDisconnect((c, code) => gone.push({ id: c.id, code }));
    const fast = await openClient(ts.url);
    const fastId = (await clients.next()).id;
    const slow = await rawWsClient(ts.port);
    const slowId = (await clients.next()).id;
    slow.socket.pause();

    // Bursts of small frames (the ones that are held back), each within the limit, one burst
    // per tick; the fast client reads between them, the slow one never does.
    const text = ts.handler.prepareMessage('feed', { blob: 'z'.repeat(1000) });
    let fastReceived = 0;
    fast.on('message', () => {
      fastReceived += 1;
    });
    let sentToFast = 0;
    let slowSkipped = false;
    for (let tick = 0; tick < 5000 && !slowSkipped; tick += 1) {
      for (let i = 0; i < 50; i += 1) {
        const count = ts.handler.sendToMany([fastId, slowId], text);
        expect(count).toBeGreaterThanOrEqual(1);
        sentToFast += 1;
        if (count === 1) slowSkipped = true;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(slowSkipped).toBe(true);

    expect(await gone.next()).toEqual({ id: slowId, code: 1013 });
    const drop = await ts.logger.waitForCode('PKG_ERR_WS_SLOW_CONSUMER');
    expect(drop.context).toMatchObject({ clientId: slowId, closeCode: 1013 });
    // The fast client got every frame sent to it.
    while (fastReceived < sentToFast) await once(fast, 'message');
    expect(fastReceived).toBe(sentToFast);
    expect(fast.readyState).toBe(fast.OPEN);
  });
});
