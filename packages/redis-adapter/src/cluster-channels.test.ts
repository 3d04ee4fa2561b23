import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ClusterChannels } from './cluster-channels';
import { keySlot } from './key-slot';
import { resolveAdapterOptions } from './options';
import { Channels } from './wire';

describe('ClusterChannels', () => {
  it('puts a room’s channel in the slot of its history keys', () => {
    const channels = new ClusterChannels('pkg');
    expect(channels.room('/', 'lobby')).toBe('pkg:room:{%2F:lobby}');
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (ns, room) => {
        const keys = channels.history(ns, room);
        const slot = keySlot(channels.room(ns, room));
        return slot === keySlot(keys.meta) && slot === keySlot(keys.stream);
      }),
    );
  });

  it('keeps two rooms apart, even with braces and colons in their names', () => {
    const channels = new ClusterChannels('pkg');
    expect(channels.room('a:b', 'c')).not.toBe(channels.room('a', 'b:c'));
    expect(channels.room('/', '{x}')).not.toBe(channels.room('/', 'x'));
  });

  it('names the other channels as one Redis does', () => {
    const cluster = new ClusterChannels('pkg');
    const single = new Channels('pkg');
    expect([cluster.all, cluster.requests, cluster.namespace('/'), cluster.replies('n')]).toEqual([
      single.all,
      single.requests,
      single.namespace('/'),
      single.replies('n'),
    ]);
  });
});

describe('the cluster option', () => {
  it('takes seed node URLs and a check interval', () => {
    const o = resolveAdapterOptions({ cluster: { rootNodes: ['redis://127.0.0.1:7000'] } });
    expect(o.cluster).toEqual({ rootNodes: ['redis://127.0.0.1:7000'], checkInterval: 1000 });
    expect(resolveAdapterOptions({}).cluster).toBeNull();
  });

  it('says what is wrong and how to fix it', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ rootNodes: [] }, /non-empty list of node URLs/],
      [{ rootNodes: 'redis://a:1' }, /non-empty list of node URLs/],
      [
        { rootNodes: ['127.0.0.1:7000'] },
        /rootNodes\[0\]" must be a URL like "redis:\/\/host:port"/,
      ],
      [{ rootNodes: [7000] }, /rootNodes\[0\]/],
      [{ rootNodes: ['redis://a:1'], seeds: [] }, /unknown option "seeds"/],
      [{ rootNodes: ['redis://a:1'], checkInterval: 0 }, /"cluster.checkInterval"/],
      ['redis://a:1', /must be an object/],
    ];
    for (const [cluster, message] of bad) {
      expect(() => resolveAdapterOptions({ cluster })).toThrow(message);
      expect(() => resolveAdapterOptions({ cluster })).toThrow(
        expect.objectContaining({ code: 'PKG_ERR_REDIS_INVALID_OPTION' }),
      );
    }
    expect(() =>
      resolveAdapterOptions({ url: 'redis://a:1', cluster: { rootNodes: ['redis://a:1'] } }),
    ).toThrow(/either "url" \(one Redis\) or "cluster"/);
  });
});
