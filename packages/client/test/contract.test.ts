// One typed contract across the wire: the SAME two interfaces type the server's controller
// (`SocketController<Host, ServerEvents, ClientEvents>`) and the client
// (`Client<ClientEvents, ServerEvents>`). `tsc -p tsconfig.test.json` type-checks this file;
// each line under an expect-error directive must fail to compile, on either side. Jest then
// runs both halves against each other over a real socket.
import { afterEach, describe, expect, it } from '@jest/globals';
import { OnConnect, SocketController, SocketOn, type ControllerHost } from '@pkg/core';
import { Client } from '../src/index';
import { cleanup, makeClient, next, startCoreServer } from './helpers';

afterEach(cleanup);

/** Client -> server. */
interface ClientEvents {
  'chat.send': (data: { room: string; text: string }) => { delivered: boolean };
}

/** Server -> client. */
interface ServerEvents {
  'chat.message': (data: { from: string; text: string }) => void;
  hello: (data: { clientId: string }) => void;
}

class ChatController extends SocketController<ControllerHost, ServerEvents, ClientEvents> {
  @OnConnect()
  greet(clientId: string): void {
    this.emit(clientId, 'hello', { clientId });
  }

  @SocketOn('chat.send')
  send(clientId: string, data: { room: string; text: string }): { delivered: boolean } {
    this.broadcast('chat.message', { from: clientId, text: data.text });
    return { delivered: true };
  }
}

/** Type checks only (never called): what one interface forbids on each side. */
function bothSides(client: Client<ClientEvents, ServerEvents>, chat: ChatController): void {
  // @ts-expect-error -- client: `room` is missing from the payload
  client.emit('chat.send', { text: 'hi' });
  // @ts-expect-error -- client: the server sends no `chat.gone`
  client.on('chat.gone', () => undefined);
  // @ts-expect-error -- client: the answer of chat.send is { delivered: boolean }
  const wrong: Promise<{ ok: true }> = client.emitWithAck('chat.send', { room: 'r', text: 'hi' });
  void wrong;
  // @ts-expect-error -- server: `from` is a string
  chat.emit('c1', 'chat.message', { from: 1, text: 'hi' });
  // @ts-expect-error -- server: `chat.send` is what clients send, not the server
  chat.broadcast('chat.send', { room: 'r', text: 'hi' });

  class Wrong extends SocketController<ControllerHost, ServerEvents, ClientEvents> {
    // @ts-expect-error -- server: the handler must accept { room, text }
    @SocketOn('chat.send')
    send(_clientId: string, _data: { room: number }): { delivered: boolean } {
      return { delivered: true };
    }

    // @ts-expect-error -- server: `chat.message` is not in ClientEvents
    @SocketOn('chat.message')
    message(_clientId: string, _data: { from: string; text: string }): void {}
  }
  void Wrong;
}
void bothSides;

describe('one pair of event maps for the server and the client', () => {
  it('carries typed messages both ways', async () => {
    const { url } = await startCoreServer(() => [new ChatController()]);
    const client = makeClient<ClientEvents, ServerEvents>(url);
    const hello = next<{ clientId: string }>(client, 'hello');
    await client.connect();
    const { clientId } = await hello;
    const message = new Promise<{ from: string; text: string }>((resolve) =>
      client.once('chat.message', (data) => resolve(data)),
    );
    client.emit('chat.send', { room: 'lobby', text: 'hi' });
    expect(await message).toEqual({ from: clientId, text: 'hi' });
  });
});
