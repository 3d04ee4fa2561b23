import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import type { WsClient } from '@pkg/ws-protocol';
import { Connection } from '../protocol/connection';
import { ConnectionTable } from '../protocol/connections';
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
  it('tracks a connection as http and forgets it when its socket closed', () => {
    const registry = new ClientRegistry(new ConnectionTable());
    const s = socket();
    registry.trackConnection(s, 'a');
    expect(registry.idOf(s)).toBe('a');
    expect(registry.getType('a')).toBe('http');
    expect(registry.setData('a', 'k', 1)).toBe(true);
    registry.forget(s);
    expect(registry.isConnected('a')).toBe(false);
    expect(registry.getData('a')).toBeUndefined();
  });

  it('reads a WebSocket client from the connections, whose data outlives its socket until it ends', () => {
    const table = new ConnectionTable();
    const registry = new ClientRegistry(table);
    const s = socket();
    registry.trackConnection(s, 'a');
    const conn = new Connection({ id: 'a', data: { user: 'ada' } } as unknown as WsClient, false);
    table.set(conn);
    registry.upgraded('a');
    expect(registry.getType('a')).toBe('ws');
    registry.forget(s); // the TCP socket closes first: the ws client is not forgotten by it
    expect(registry.getData('a', 'user')).toBe('ada');
    expect(registry.setData('a', 'seen', true)).toBe(true);
    conn.leave(); // gone for good: OnDisconnect handlers still read its data
    expect(registry.isConnected('a')).toBe(false);
    expect(registry.types.has('a')).toBe(false);
    expect(registry.getData('a')).toEqual({ user: 'ada', seen: true });
    table.remove(conn);
    expect(registry.getData('a')).toBeUndefined();
    expect(registry.setData('a', 'k', 1)).toBe(false);
  });

  it('stores data under any key name, __proto__ included, without touching prototypes', () => {
    const registry = new ClientRegistry(new ConnectionTable());
    registry.trackConnection(socket(), 'a');
    registry.setData('a', '__proto__', { polluted: true });
    const all = registry.getData('a') as Record<string, unknown>;
    expect(Object.hasOwn(all, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(registry.snapshotData().get('a')).toEqual(all);
  });

  it('refuses data for an unknown client and destroys sockets on request', () => {
    const registry = new ClientRegistry(new ConnectionTable());
    expect(registry.setData('nobody', 'k', 1)).toBe(false);
    const a = socket();
    const b = socket();
    // As the server does: one 'close' listener per socket that tells the registry.
    for (const [s, id] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      registry.trackConnection(s, id);
      s.on('close', () => registry.forget(s));
    }
    registry.destroy('a');
    expect(a.destroyed).toBe(true);
    expect(registry.types.size).toBe(1);
    registry.destroyAll();
    expect(b.destroyed).toBe(true);
    expect(registry.types.size).toBe(0);
  });
});
