import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { ClientRegistry } from './client-registry';

class FakeSocket extends EventEmitter {
  destroyed = false;
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

const socket = (): FakeSocket & Socket => new FakeSocket() as FakeSocket & Socket;

describe('ClientRegistry', () => {
  it('tracks a connection as http and forgets it when the socket closes', () => {
    const registry = new ClientRegistry();
    const s = socket();
    registry.trackConnection(s, 'a');
    expect(registry.idOf(s)).toBe('a');
    expect(registry.getType('a')).toBe('http');
    expect(registry.setData('a', 'k', 1)).toBe(true);
    s.emit('close');
    expect(registry.isConnected('a')).toBe(false);
    expect(registry.getData('a')).toBeUndefined();
  });

  it('keeps WebSocket data until it is explicitly forgotten after the disconnect', () => {
    const registry = new ClientRegistry();
    const s = socket();
    registry.trackConnection(s, 'a');
    registry.markWebSocket('a', { user: 'ada' });
    expect(registry.getType('a')).toBe('ws');
    s.emit('close'); // the TCP socket closes first: the ws client is not forgotten by it
    expect(registry.getData('a', 'user')).toBe('ada');
    registry.markDisconnected('a');
    expect(registry.isConnected('a')).toBe(false);
    expect(registry.getData('a')).toEqual({ user: 'ada' });
    registry.forgetData('a');
    expect(registry.getData('a')).toBeUndefined();
  });

  it('stores data under any key name, __proto__ included, without touching prototypes', () => {
    const registry = new ClientRegistry();
    registry.trackConnection(socket(), 'a');
    registry.setData('a', '__proto__', { polluted: true });
    const all = registry.getData('a') as Record<string, unknown>;
    expect(Object.hasOwn(all, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(registry.snapshotData().get('a')).toEqual(all);
  });

  it('refuses data for an unknown client and destroys sockets on request', () => {
    const registry = new ClientRegistry();
    expect(registry.setData('nobody', 'k', 1)).toBe(false);
    const a = socket();
    const b = socket();
    registry.trackConnection(a, 'a');
    registry.trackConnection(b, 'b');
    registry.destroy('a');
    expect(a.destroyed).toBe(true);
    expect(registry.types.size).toBe(1);
    registry.destroyAll();
    expect(b.destroyed).toBe(true);
    expect(registry.types.size).toBe(0);
  });
});
