import { describe, expect, it } from '@jest/globals';
import { NullLogger } from '@pkg/logger';
import {
  LocalAdapter,
  type AdapterHost,
  type AdapterState,
  type CountTarget,
  type RemoteClientOperation,
} from './adapter';
import { NamespaceManager } from '../ws/namespace-manager';
import { Server } from '../server';
import { ServerConfig } from '../config/server-config';

function setup(ids: string[]) {
  const namespaces = new NamespaceManager();
  const connected = new Set(ids);
  const deliveries: Array<{ ids: string[]; text: string | Uint8Array }> = [];
  const host: AdapterHost = {
    namespaces,
    localClientIds: () => connected.values(),
    deliver(clientIds, text) {
      const list = [...clientIds].filter((id) => connected.has(id));
      deliveries.push({ ids: list, text });
      return list.length;
    },
  };
  const adapter = new LocalAdapter();
  adapter.attach(host);
  for (const id of ids) adapter.joinNamespace(id, '/');
  return { adapter, namespaces, deliveries };
}

describe('LocalAdapter', () => {
  it('delivers to every local client when no namespace or room is given', () => {
    const { adapter, deliveries } = setup(['a', 'b', 'c']);
    expect(adapter.broadcast('T', {})).toBe(3);
    expect(deliveries).toEqual([{ ids: ['a', 'b', 'c'], text: 'T' }]);
  });

  it('delivers to a namespace, a room, and a room of the default namespace', () => {
    const { adapter, deliveries } = setup(['a', 'b', 'c']);
    adapter.joinRoom('a', 'r', '/x');
    adapter.joinRoom('b', 'r', '/');
    expect(adapter.broadcast('N', { namespace: '/x' })).toBe(1);
    expect(adapter.broadcast('R', { namespace: '/x', room: 'r' })).toBe(1);
    expect(adapter.broadcast('D', { room: 'r' })).toBe(1);
    expect(deliveries.map((d) => d.ids)).toEqual([['a'], ['a'], ['b']]);
  });

  it('leaves out the sender (one id or several)', () => {
    const { adapter, deliveries } = setup(['a', 'b', 'c']);
    adapter.broadcast('T', { except: 'a' });
    adapter.broadcast('T', { except: ['a', 'c'] });
    adapter.broadcast('T', { except: [] });
    expect(deliveries.map((d) => d.ids)).toEqual([['b', 'c'], ['b'], ['a', 'b', 'c']]);
  });

  it('passes the same serialised text to delivery, never re-serialising', () => {
    const { adapter, deliveries } = setup(['a', 'b']);
    const text = JSON.stringify({ event: 'e', data: {} });
    adapter.broadcast(text, {});
    expect(deliveries[0]!.text).toBe(text);
  });

  it('counts clients for all, a namespace and a room', () => {
    const { adapter } = setup(['a', 'b', 'c']);
    adapter.joinRoom('a', 'r', '/x');
    expect(adapter.clientCount()).toBe(3);
    expect(adapter.clientCount({ namespace: '/' })).toBe(3);
    expect(adapter.clientCount({ namespace: '/x' })).toBe(1);
    expect(adapter.clientCount({ namespace: '/x', room: 'r' })).toBe(1);
    expect(adapter.clientCount({ room: 'r' })).toBe(0);
  });

  it('applies membership changes to the namespace manager', () => {
    const { adapter, namespaces } = setup(['a']);
    adapter.joinRoom('a', 'r', '/');
    adapter.joinRoom('a', 's', '/');
    adapter.leaveRoom('a', 's', '/');
    expect(namespaces.getRoomsForClient('a')).toEqual(['r']);
    adapter.leaveAllRooms('a');
    expect(namespaces.getRoomsForClient('a')).toEqual([]);
    adapter.joinNamespace('a', '/y');
    adapter.leaveNamespace('a', '/y');
    expect(namespaces.getNamespacesForClient('a')).toEqual(['/']);
    adapter.removeClient('a');
    expect(namespaces.getStats()).toEqual({ namespaces: 0, rooms: 0, clients: 0 });
  });

  it('says clearly when it is used before attach', () => {
    const adapter = new LocalAdapter();
    expect(() => adapter.broadcast('T', {})).toThrow(/not attached/);
    adapter.close();
  });

  it('lists the ids a target selects and reports the local state', () => {
    const { adapter } = setup(['a', 'b', 'c']);
    adapter.joinRoom('b', 'r', '/x');
    expect(adapter.clientIds()).toEqual(['a', 'b', 'c']);
    expect(adapter.clientIds({ namespace: '/x' })).toEqual(['b']);
    expect(adapter.clientIds({ namespace: '/x', room: 'r' })).toEqual(['b']);
    expect(adapter.clientIds({ room: 'r' })).toEqual([]);
    expect(adapter.getState()).toBe('local');
    expect('forward' in adapter).toBe(false);
  });
});

/** A LocalAdapter that also plays a cluster adapter: records what the server hands it. */
class ClusterLikeAdapter extends LocalAdapter {
  readonly forwarded: RemoteClientOperation[] = [];
  host: AdapterHost | null = null;
  state: AdapterState = 'connected';

  override attach(host: AdapterHost): void {
    super.attach(host);
    this.host = host;
  }

  override clientIds(target: CountTarget = {}): string[] {
    return [...super.clientIds(target), 'remote-1'];
  }

  forward(operation: RemoteClientOperation): Promise<boolean> {
    this.forwarded.push(operation);
    return Promise.resolve(true);
  }

  override getState(): AdapterState {
    return this.state;
  }
}

function serverWith(adapter: LocalAdapter): Server {
  const server = new Server(
    new ServerConfig({ host: '127.0.0.1', port: 0 }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  server.setAdapter(adapter);
  return server;
}

describe('Server with a cluster adapter', () => {
  it('hands operations on clients that are not connected here to forward()', () => {
    const adapter = new ClusterLikeAdapter();
    const server = serverWith(adapter);
    expect(server.send('remote-1', 'hello', { a: 1 })).toBe(true);
    expect(server.joinRoom('remote-1', 'r', '/x')).toBe(true);
    server.leaveRoom('remote-1', 'r', '/x');
    server.disconnectClient('remote-1');
    expect(adapter.forwarded).toEqual([
      { type: 'send', clientId: 'remote-1', text: '{"event":"hello","data":{"a":1}}' },
      { type: 'joinRoom', clientId: 'remote-1', room: 'r', namespace: '/x' },
      { type: 'leaveRoom', clientId: 'remote-1', room: 'r', namespace: '/x' },
      { type: 'disconnect', clientId: 'remote-1' },
    ]);
  });

  it('gives the adapter a host that knows local clients and the logger', () => {
    const adapter = new ClusterLikeAdapter();
    serverWith(adapter);
    expect(adapter.host?.hasClient?.('nobody')).toBe(false);
    expect(adapter.host?.disconnect?.('nobody')).toBe(false);
    expect(adapter.host?.logger).toBeInstanceOf(NullLogger);
  });

  it('lists ids through the adapter and shows its state in the health document, still healthy', async () => {
    const adapter = new ClusterLikeAdapter();
    const server = serverWith(adapter);
    await expect(server.fetchClientIds()).resolves.toEqual(['remote-1']);
    adapter.state = 'degraded';
    expect(server.getHealth()).toMatchObject({ status: 'healthy', adapter: 'degraded' });
  });

  it('keeps the local behaviour and the spec health document with the in-memory adapter', async () => {
    const server = serverWith(new LocalAdapter());
    expect(server.send('nobody', 'hello', {})).toBe(false);
    expect(server.joinRoom('nobody', 'r')).toBe(false);
    await expect(server.fetchClientIds()).resolves.toEqual([]);
    expect(server.getHealth()).not.toHaveProperty('adapter');
  });
});
