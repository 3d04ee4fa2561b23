// The path of one message, over a real socket: from the WebSocket handler's listener to the
// handler and back, core looks its client up once (the one table of connections), the
// answer goes out through one send, and a refusal through the one door for `error`.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { SocketOn } from '@pkg/decorators';
import { WebSocketHandler } from '@pkg/ws-protocol';
import { SocketController } from '../src/index';
import { ConnectionTable } from '../src/protocol/connections';
import { cleanup, startServer, TestClient } from './helpers';

class Echo extends SocketController {
  @SocketOn('echo')
  echo(_clientId: string, data: Record<string, unknown>): Record<string, unknown> {
    return data;
  }
}

afterEach(async () => {
  jest.restoreAllMocks();
  await cleanup();
});

async function helloClient(url: string): Promise<TestClient> {
  const client = await TestClient.connect(url, {}, ['pkg.v1']);
  client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
  expect((await client.next('$welcome')).event).toBe('$welcome');
  return client;
}

describe('one message from the socket listener to the handler and back', () => {
  it('looks its client up once in core and answers with one send', async () => {
    const { wsUrl } = await startServer([new Echo()]);
    const client = await helloClient(wsUrl);
    const lookups = jest.spyOn(ConnectionTable.prototype, 'get');
    const sends = jest.spyOn(WebSocketHandler.prototype, 'sendRaw');
    const refusals = jest.spyOn(WebSocketHandler.prototype, 'refuse');
    client.sendRaw(JSON.stringify({ event: 'echo', data: { n: 1 }, id: 7 }));
    const answer = await client.next('echo');
    expect(answer).toEqual({ event: 'echo', id: 7, data: { n: 1 } });
    expect(lookups).toHaveBeenCalledTimes(1);
    expect(sends).toHaveBeenCalledTimes(1);
    expect(refusals).not.toHaveBeenCalled();
  });

  it('sends a refusal through the one door, with the same single lookup', async () => {
    const { wsUrl } = await startServer([new Echo()]);
    const client = await helloClient(wsUrl);
    const lookups = jest.spyOn(ConnectionTable.prototype, 'get');
    const sends = jest.spyOn(WebSocketHandler.prototype, 'sendRaw');
    const refusals = jest.spyOn(WebSocketHandler.prototype, 'refuse');
    client.sendRaw(JSON.stringify({ event: 'nope', data: {}, id: 8 }));
    const error = await client.next('error');
    expect(error).toMatchObject({ id: 8, data: { code: 'unknown_event' } });
    expect(lookups).toHaveBeenCalledTimes(1);
    expect(refusals).toHaveBeenCalledTimes(1);
    expect(sends).not.toHaveBeenCalled();
  });
});
