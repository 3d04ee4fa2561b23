// One typed contract: the event maps type-check emit, emitWithAck and on. Each line under an
// expect-error directive must fail to compile (tsc -p tsconfig.test.json runs in typecheck);
// if one of them compiled, tsc would report the unused directive.
import { describe, expect, it } from '@jest/globals';
import { Client, type ConnectInfo } from '../src/index';

interface ClientEvents {
  'chat.message': (data: { room: string; text: string }) => { delivered: boolean };
  typing: (data: { on: boolean }) => void;
}

interface ServerEvents {
  'chat.message': (data: { from: string; text: string }) => void;
  'confirm.delete': (data: { file: string }) => boolean;
}

function typeChecks(client: Client<ClientEvents, ServerEvents>): void {
  client.emit('chat.message', { room: 'lobby', text: 'hi' });
  // @ts-expect-error a wrong payload
  client.emit('chat.message', { room: 'lobby', txt: 'hi' });
  // @ts-expect-error an event that is not in the map
  client.emit('chat.mesage', { room: 'lobby', text: 'hi' });

  const ack: Promise<{ delivered: boolean }> = client.emitWithAck('chat.message', {
    room: 'lobby',
    text: 'hi',
  });
  // @ts-expect-error the answer is { delivered: boolean }, not a string
  const wrong: Promise<string> = client.emitWithAck('chat.message', { room: 'lobby', text: 'hi' });
  void ack;
  void wrong;

  client.on('chat.message', (data) => {
    const from: string = data.from;
    void from;
  });
  // @ts-expect-error the data of chat.message has no `foo`
  client.on('chat.message', (data) => data.foo);
  client.on('confirm.delete', (data) => data.file.endsWith('.tmp'));
  client.on('confirm.delete', async () => true);
  // @ts-expect-error a request of the server must be answered with a boolean
  client.on('confirm.delete', () => 'yes');
  // @ts-expect-error an event the server does not send
  client.on('chat.gone', () => undefined);
  client.on('connect', (info: ConnectInfo) => void info.resumed);
  client.on('error', (data) => void data.code.toUpperCase());
}

describe('typed event maps', () => {
  it('buffer a typed emit while disconnected and accept typed listeners', () => {
    const client = new Client<ClientEvents, ServerEvents>('ws://127.0.0.1:9', { network: null });
    expect(() => client.emit('chat.message', { room: 'lobby', text: 'hi' })).not.toThrow();
    expect(client.on('chat.message', () => undefined)).toBe(client);
    expect(typeof typeChecks).toBe('function');
  });

  it('default to unknown data without maps', () => {
    const client = new Client('ws://127.0.0.1:9', { network: null });
    client.on('anything', (data: unknown) => data);
    expect(() => client.emit('anything', [1, 2])).not.toThrow();
    expect(() => client.emit('anything', 'text' as unknown as object)).toThrow(TypeError);
  });
});
