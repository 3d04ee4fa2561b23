import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import type { WsClient } from '../src/index';
import {
  cleanup,
  closed,
  collector,
  openClient,
  rawWsClient,
  refusedClient,
  startServer,
} from './helpers';

afterEach(cleanup);

describe('closeAll', () => {
  it('sends 1001 to all, terminates a client that ignores the close, resolves when all are gone', async () => {
    // A long closeTimeout: only closeAll's own timeout can end the ignoring client.
    const ts = await startServer({ closeTimeout: 60_000 });
    const clients = collector<WsClient>();
    const gone = collector<{ id: string; code: number; reason: string }>();
    ts.handler.onConnect(clients.push);
    ts.handler.onDisconnect((c, code, reason) => gone.push({ id: c.id, code, reason }));

    const polite = await openClient(ts.url);
    const politeClient = await clients.next();
    const ignoring = await rawWsClient(ts.port);
    const ignoringClient = await clients.next();
    const politeClosed = closed(polite);
    const ignoringClosed = once(ignoring.socket, 'close');

    await ts.handler.closeAll(1001, 'Server restarting', 50);

    expect(ts.handler.size).toBe(0);
    expect(await politeClosed).toEqual({ code: 1001, reason: 'Server restarting' });
    const frame = ignoring.frames.find((f) => f.opcode === 0x8);
    expect(frame?.payload.readUInt16BE(0)).toBe(1001);
    expect(frame?.payload.subarray(2).toString()).toBe('Server restarting');
    await ignoringClosed;

    const byId = Object.fromEntries(gone.items.map((g) => [g.id, g]));
    expect(gone.items).toHaveLength(2);
    expect(byId[politeClient.id]).toMatchObject({ code: 1001, reason: 'Server restarting' });
    expect(byId[ignoringClient.id]).toMatchObject({ code: 1001, reason: 'Server restarting' });
  });

  it('defaults to 1001 and refuses new handshakes with 503 afterwards', async () => {
    const ts = await startServer();
    const ws = await openClient(ts.url);
    const done = closed(ws);
    await ts.handler.closeAll();
    expect(await done).toEqual({ code: 1001, reason: 'Server shutting down' });
    const answer = await refusedClient(ts.url);
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'Service Unavailable',
      code: 'PKG_ERR_WS_SHUTTING_DOWN',
      message: 'The server is shutting down.',
    });
  });

  it('resolves at once without clients', async () => {
    const ts = await startServer();
    await expect(ts.handler.closeAll()).resolves.toBeUndefined();
  });

  it('checks its arguments', async () => {
    const ts = await startServer();
    await expect(ts.handler.closeAll(1005)).rejects.toMatchObject({
      code: 'PKG_ERR_WS_INVALID_CLOSE_CODE',
    });
    await expect(ts.handler.closeAll(1001, 'bye', -1)).rejects.toBeInstanceOf(RangeError);
    // A refused call changes nothing: new clients are still accepted.
    await openClient(ts.url);
    expect(ts.handler.size).toBe(1);
  });
});
