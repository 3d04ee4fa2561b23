import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import type { WsClient } from '../src/index';
import { cleanup, collector, openClient, rawWsClient, startServer } from './helpers';

afterEach(cleanup);

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('slow consumers', () => {
  it('drops a client that stops reading (1013) while a fast client keeps receiving', async () => {
    const ts = await startServer({ maxBufferedAmount: 256 * 1024, closeTimeout: 50 });
    const clients = collector<WsClient>();
    const gone = collector<{ id: string; code: number; reason: string }>();
    ts.handler.onConnect(clients.push);
    ts.handler.onDisconnect((c, code, reason) => gone.push({ id: c.id, code, reason }));

    const fast = await openClient(ts.url);
    const fastClient = await clients.next();
    let fastReceived = 0;
    fast.on('message', () => {
      fastReceived += 1;
    });

    // The slow client completes the handshake, then stops reading from its socket.
    const slow = await rawWsClient(ts.port);
    const slowClient = await clients.next();
    slow.socket.pause();

    const text = ts.handler.prepareMessage('feed', { blob: 'x'.repeat(64 * 1024) });
    let sentToFast = 0;
    let slowDropped = false;
    // Bounded: kernel buffers on loopback hold a few MiB, far below this many messages.
    for (let i = 0; i < 5000 && !slowDropped; i += 1) {
      expect(ts.handler.sendRaw(fastClient.id, text)).toBe(true);
      sentToFast += 1;
      slowDropped = !ts.handler.sendRaw(slowClient.id, text);
      await nextTurn();
    }
    expect(slowDropped).toBe(true);

    const drop = await ts.logger.waitForCode('PKG_ERR_WS_SLOW_CONSUMER');
    expect(drop.level).toBe('warning');
    expect(drop.context).toMatchObject({ clientId: slowClient.id, closeCode: 1013 });
    expect(Number(drop.context?.bufferedAmount)).toBeGreaterThan(256 * 1024);

    expect(await gone.next()).toEqual({
      id: slowClient.id,
      code: 1013,
      reason: 'Send buffer limit exceeded',
    });
    expect(ts.handler.getClient(slowClient.id)).toBeUndefined();

    // The fast client got every message and is still connected and served.
    while (fastReceived < sentToFast) await once(fast, 'message');
    expect(fastReceived).toBe(sentToFast);
    expect(ts.handler.send(fastClient.id, 'still', {})).toBe(true);
    expect(fast.readyState).toBe(fast.OPEN);
    expect(gone.items).toHaveLength(1);
  });

  it('sendToMany skips (and drops) the slow client but counts the others', async () => {
    const ts = await startServer({ maxBufferedAmount: 128 * 1024, closeTimeout: 50 });
    const clients = collector<WsClient>();
    ts.handler.onConnect(clients.push);
    const fast = await openClient(ts.url);
    const fastClient = await clients.next();
    fast.on('message', () => {});
    const slow = await rawWsClient(ts.port);
    const slowClient = await clients.next();
    slow.socket.pause();

    const text = ts.handler.prepareMessage('feed', { blob: 'y'.repeat(64 * 1024) });
    const ids = [fastClient.id, slowClient.id];
    let count = 2;
    for (let i = 0; i < 5000 && count === 2; i += 1) {
      count = ts.handler.sendToMany(ids, text);
      await nextTurn();
    }
    expect(count).toBe(1);
    await ts.logger.waitForCode('PKG_ERR_WS_SLOW_CONSUMER');
    expect(ts.handler.sendToMany(ids, text)).toBe(1);
  });
});
