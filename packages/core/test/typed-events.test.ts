// One typed contract, server side: the event maps of a SocketController type `emit`,
// `broadcast` and the `SocketOn` handlers. `tsc` type-checks this file (typecheck), and each
// line under an expect-error directive must fail to compile; if one compiled, tsc would
// report the unused directive. Jest runs the typed controller over a real socket.
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  OnConnect,
  SocketController,
  SocketOn,
  bytesSchema,
  type ControllerHost,
  type EventAnswer,
  type EventPayload,
  type Server,
} from '../src/index';
import { TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

interface ChatText {
  text: string;
}

/** What clients send. */
interface ClientEvents {
  'chat.send': (data: ChatText) => { delivered: boolean };
  typing: (data: { on: boolean }) => void;
}

/** What the server sends. */
interface ServerEvents {
  'chat.message': (data: { from: string; text: string }) => void;
  hello: (data: { clientId: string }) => void;
}

class TypedChat extends SocketController<ControllerHost, ServerEvents, ClientEvents> {
  @OnConnect()
  connected(clientId: string): void {
    this.emit(clientId, 'hello', { clientId });
  }

  @SocketOn('chat.send')
  send(clientId: string, data: ChatText): { delivered: boolean } {
    this.broadcast('chat.message', { from: clientId, text: data.text });
    return { delivered: true };
  }

  @SocketOn('typing')
  typing(clientId: string, data: { on: boolean }): void {
    this.broadcastToRoomClients('chat.message', { from: clientId, text: String(data.on) }, 'r');
  }
}

/** Other handler forms that compile (one handler per event and class, hence three classes). */
function acceptedForms(): unknown[] {
  class AsyncAnswer extends SocketController<ControllerHost, ServerEvents, ClientEvents> {
    @SocketOn('chat.send')
    async send(_clientId: string, _data: { text: string }): Promise<{ delivered: boolean }> {
      return { delivered: false };
    }

    @SocketOn('typing')
    typing(_clientId: string, _data: unknown): void {}
  }
  class NoData extends SocketController<ControllerHost, ServerEvents, ClientEvents> {
    @SocketOn('typing')
    typing(_clientId: string): void {}
  }
  return [AsyncAnswer, NoData];
}

/** Every line under a directive fails to compile (type checks only, never called). */
function wrongUses(chat: TypedChat): void {
  // @ts-expect-error -- `from` is a string
  chat.emit('c1', 'chat.message', { from: 1, text: 'hi' });
  // @ts-expect-error -- `text` is missing
  chat.broadcast('chat.message', { from: 'c1' });
  // @ts-expect-error -- the server does not send `chat.mesage`
  chat.emit('c1', 'chat.mesage', { from: 'c1', text: 'hi' });
  // @ts-expect-error -- an event that is not in ServerEvents
  chat.broadcastToRoomClients('welcome', { clientId: 'c1' }, 'r');

  class WrongHandlers extends SocketController<ControllerHost, ServerEvents, ClientEvents> {
    // @ts-expect-error -- the payload of chat.send is { text: string }
    @SocketOn('chat.send')
    wrongPayload(_clientId: string, _data: { text: number }): { delivered: boolean } {
      return { delivered: true };
    }

    // @ts-expect-error -- clients send no `chat.sned`
    @SocketOn('chat.sned')
    unknownEvent(_clientId: string, _data: ChatText): void {}

    // @ts-expect-error -- chat.send is answered with { delivered: boolean }
    @SocketOn('chat.send')
    wrongAnswer(_clientId: string, _data: ChatText): string {
      return 'ok';
    }

    // @ts-expect-error -- a payload narrower than the event's does not accept it
    @SocketOn('typing')
    narrower(_clientId: string, _data: { on: true }): void {}
  }
  void WrongHandlers;
}

/** The untyped default keeps every event name and object or array data. */
class Untyped extends SocketController<Server> {
  @SocketOn('anything')
  anything(clientId: string, data: { n?: number }): number {
    this.emit(clientId, 'whatever', { n: data.n ?? 0 });
    this.broadcast('list', [1, 2, 3], null, null, { except: clientId });
    return 1;
  }
}

function untypedWrongUses(controller: Untyped): void {
  // @ts-expect-error -- data is an object or an array, even untyped
  controller.emit('c1', 'whatever', 'text');
}
void wrongUses;
void untypedWrongUses;

describe('typed controllers', () => {
  it('declare handlers in every accepted form', () => {
    expect(acceptedForms()).toHaveLength(2);
  });

  it('derive payload and answer types from one map', () => {
    const payload: EventPayload<ClientEvents, 'chat.send'> = { text: 'hi' };
    const answer: EventAnswer<ClientEvents, 'chat.send'> = { delivered: true };
    expect([payload, answer]).toEqual([{ text: 'hi' }, { delivered: true }]);
  });

  it('run like untyped ones over a real socket', async () => {
    const chat = new TypedChat();
    const { wsUrl } = await startServer([chat, new Untyped()]);
    const client = await TestClient.connect(wsUrl);
    const hello = await client.next('hello');
    const clientId = (hello.data as { clientId: string }).clientId;
    expect(typeof clientId).toBe('string');
    client.send('chat.send', { text: 'hi' });
    expect(await client.next('chat.message')).toEqual({
      event: 'chat.message',
      data: { from: clientId, text: 'hi' },
    });
    client.send('anything', { n: 4 });
    expect(await client.next('whatever')).toEqual({ event: 'whatever', data: { n: 4 } });
  });
});

interface AskEvents {
  'confirm.delete': (data: { file: string }) => boolean;
}
class Asker extends SocketController<ControllerHost, AskEvents> {}
async function asks(a: Asker): Promise<void> {
  const yes: boolean = await a.emitWithAck('c1', 'confirm.delete', { file: 'x' });
  // @ts-expect-error -- the answer is a boolean
  const no: string = await a.emitWithAck('c1', 'confirm.delete', { file: 'x' });
  // @ts-expect-error -- wrong payload
  await a.emitWithAck('c1', 'confirm.delete', { name: 'x' });
  void yes;
  void no;
}
void asks;

/** Binary events: a map member whose data is a Uint8Array types bytes end to end. */
interface DocServerEvents {
  'doc.update': (data: Uint8Array) => void;
  'doc.sign': (data: Uint8Array) => Uint8Array;
  'doc.title': (data: { title: string }) => void;
}
interface DocClientEvents {
  'doc.update': (data: Uint8Array) => Uint8Array;
}
class DocSync extends SocketController<ControllerHost, DocServerEvents, DocClientEvents> {
  @SocketOn('doc.update')
  update(clientId: string, data: Uint8Array): Uint8Array {
    this.broadcastToRoomClients('doc.update', data, 'doc', '/', clientId);
    return data;
  }
}
async function binaryUses(doc: DocSync): Promise<void> {
  doc.emit('c1', 'doc.update', new Uint8Array(4));
  doc.broadcast('doc.update', Buffer.from('a'), { room: 'doc' });
  const signed: Uint8Array = await doc.emitWithAck('c1', 'doc.sign', Uint8Array.of(1));
  // @ts-expect-error -- doc.update carries bytes, not JSON
  doc.emit('c1', 'doc.update', { bytes: [1] });
  // @ts-expect-error -- doc.title carries JSON, not bytes
  doc.broadcast('doc.title', new Uint8Array(1));
  // @ts-expect-error -- the answer is bytes
  const text: string = await doc.emitWithAck('c1', 'doc.sign', Uint8Array.of(1));
  class WrongBytes extends SocketController<ControllerHost, DocServerEvents, DocClientEvents> {
    // @ts-expect-error -- the handler must accept bytes
    @SocketOn('doc.update')
    update(_clientId: string, _data: { text: string }): Uint8Array {
      return new Uint8Array(0);
    }
  }
  void signed;
  void text;
  void WrongBytes;
}
void binaryUses;

/** The core README's "Sending bytes" example: a typed bytes event bounded by bytesSchema. */
class BoundedDoc extends SocketController<ControllerHost, DocServerEvents, DocClientEvents> {
  @SocketOn('doc.update', { schema: bytesSchema({ maxLength: 256 * 1024 }) })
  update(clientId: string, data: Uint8Array): Uint8Array {
    this.broadcast('doc.update', data, { room: 'doc', except: clientId });
    return data;
  }
}
void BoundedDoc;

/** An untyped controller sends bytes too. */
function untypedBytes(controller: Untyped): void {
  controller.emit('c1', 'blob', new Uint8Array(2));
  controller.broadcast('blob', Buffer.alloc(2), null, 'room');
}
void untypedBytes;
