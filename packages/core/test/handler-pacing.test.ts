// Two limits on what one connection can make the server do, over real sockets: a handler
// that timed out keeps its ws_max_pending slot until its work settles, and messages that
// fail their schema are protocol errors (replies spaced, counted toward 1008).
import { afterEach, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { SocketController, SocketOn } from '../src/index';
import { TestClient, cleanup, deferred, startServer, type Envelope } from './helpers';

afterEach(cleanup);

interface Message extends Envelope {
  id?: unknown;
}

class SlowController extends SocketController {
  release = deferred();
  finished = 0;

  @SocketOn('slow')
  async slow(): Promise<string> {
    await this.release.promise;
    this.finished += 1;
    return 'late';
  }

  @SocketOn('quick')
  quick(): string {
    return 'quick';
  }

  @SocketOn('sum', { schema: z.array(z.number()) })
  sum(_clientId: string, data: number[]): number {
    return data.reduce((a, b) => a + b, 0);
  }
}

async function helloV1(url: string): Promise<TestClient> {
  const client = await TestClient.connect(url, {}, ['pkg.v1']);
  client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
  expect((await client.next()).event).toBe('$welcome');
  return client;
}

const request = (client: TestClient, event: string, data: unknown, id: unknown): void =>
  client.sendRaw(JSON.stringify({ event, data, id }));

describe('a handler that timed out', () => {
  it('keeps its ws_max_pending slot until its work settles, and its late result is dropped', async () => {
    const app = new SlowController();
    const { wsUrl, server } = await startServer([app], {
      ws_max_pending: 1,
      ws_handler_timeout: 100,
    });
    const client = await helloV1(wsUrl);
    request(client, 'slow', {}, 1);
    expect(await client.next('error')).toMatchObject({ id: 1, data: { code: 'handler_timeout' } });
    // The slow handler still runs: a second handler would be the second running at once.
    request(client, 'quick', {}, 2);
    expect(await client.next('error')).toMatchObject({
      id: 2,
      data: { code: 'busy', event: 'quick' },
    });
    expect(server.getLoad()).toMatchObject({ pendingHandlers: 1, clientsWithPendingHandlers: 1 });
    app.release.resolve();
    await new Promise((r) => setTimeout(r, 20));
    expect(app.finished).toBe(1);
    expect(server.getLoad()).toMatchObject({ pendingHandlers: 0, clientsWithPendingHandlers: 0 });
    request(client, 'quick', {}, 3);
    expect((await client.next('quick')) as Message).toEqual({
      event: 'quick',
      id: 3,
      data: 'quick',
    });
    expect(client.pending()).toEqual([]);
  });

  it('releases the slot of a handler that never settles when its client disconnects', async () => {
    const app = new SlowController();
    const { wsUrl, server } = await startServer([app], {
      ws_max_pending: 1,
      ws_handler_timeout: 100,
    });
    const client = await helloV1(wsUrl);
    request(client, 'slow', {}, 1);
    await client.next('error');
    expect(server.getLoad()).toMatchObject({ pendingHandlers: 1 });
    client.ws.close(1000);
    await client.closed;
    const deadline = Date.now() + 2000;
    while (server.getLoad().pendingHandlers !== 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(server.getLoad()).toMatchObject({ pendingHandlers: 0, clientsWithPendingHandlers: 0 });
  });
});

describe('validation_failed', () => {
  it('is a protocol error: replies without id are spaced, and a flood closes the connection with 1008', async () => {
    const { wsUrl } = await startServer([new SlowController()], { ws_max_protocol_errors: 10 });
    const client = await TestClient.connect(wsUrl);
    for (let i = 0; i < 15; i += 1) client.send('sum', ['not a number']);
    const closed = await client.closed;
    expect(closed.code).toBe(1008);
    const errors = client.received.filter((e) => e.event === 'error');
    // One reply per ws_error_reply_interval (1 s) for the same code.
    expect(errors.filter((e) => e.data['code'] === 'validation_failed')).toHaveLength(1);
  });

  it('still answers every request (id) that fails its schema, with its id', async () => {
    const { wsUrl } = await startServer([new SlowController()]);
    const client = await helloV1(wsUrl);
    for (const id of [1, 2, 3]) request(client, 'sum', [id, 'x'], id);
    for (const id of [1, 2, 3]) {
      expect(await client.next('error')).toMatchObject({
        id,
        data: { code: 'validation_failed', event: 'sum', issues: [{ path: [1] }] },
      });
    }
    request(client, 'sum', [1, 2], 4);
    expect(await client.next('sum')).toEqual({ event: 'sum', id: 4, data: 3 });
  });
});
