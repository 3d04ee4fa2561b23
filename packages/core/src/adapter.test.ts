import { describe, expect, it } from '@jest/globals';
import { LocalAdapter, type AdapterHost } from './adapter';
import { NamespaceManager } from './namespace-manager';

function setup(ids: string[]) {
  const namespaces = new NamespaceManager();
  const connected = new Set(ids);
  const deliveries: Array<{ ids: string[]; text: string }> = [];
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
