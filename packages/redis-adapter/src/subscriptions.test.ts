import { describe, expect, it } from '@jest/globals';
import { Subscriptions } from './subscriptions';
import { Channels } from './wire';

function setup(grace = 0) {
  const calls: string[] = [];
  const errors: unknown[] = [];
  const subs = new Subscriptions(
    new Channels('p'),
    {
      subscribe: async (channel) => void calls.push(`+${channel}`),
      unsubscribe: async (channel) => {
        calls.push(`-${channel}`);
        if (channel.endsWith('bad')) throw new Error('lost');
      },
    },
    (err) => errors.push(err),
    grace,
  );
  return { subs, calls, errors };
}

describe('Subscriptions', () => {
  it('subscribes on the first local member and unsubscribes after the last', async () => {
    const { subs, calls } = setup();
    subs.update('/', 'r', 1);
    subs.update('/', 'r', 2);
    subs.update('/chat', null, 1);
    expect(subs.size).toBe(2);
    expect(subs.targetOf('p:room:%2F:r')).toEqual({ namespace: '/', room: 'r' });
    subs.update('/', 'r', 0);
    subs.update('/', 'r', 0);
    await subs.synced();
    expect(calls).toEqual(['+p:room:%2F:r', '+p:ns:%2Fchat', '-p:room:%2F:r']);
    expect(subs.size).toBe(1);
    expect(subs.targetOf('p:room:%2F:r')).toBeUndefined();
  });

  it('says a channel is confirmed only once Redis answered its SUBSCRIBE, and not after it left', async () => {
    const { subs } = setup();
    subs.update('/', 'r', 1);
    expect(subs.confirmed('p:room:%2F:r')).toBe(false); // asked, not answered yet
    await subs.synced();
    expect(subs.confirmed('p:room:%2F:r')).toBe(true);
    subs.update('/', 'r', 0);
    expect(subs.confirmed('p:room:%2F:r')).toBe(false);
    // Left before the answer came: never confirmed.
    subs.update('/', 'q', 1);
    subs.update('/', 'q', 0);
    await subs.synced();
    expect(subs.confirmed('p:room:%2F:q')).toBe(false);
  });

  it('reports a failed change and still settles', async () => {
    const { subs, errors } = setup();
    subs.update('/', 'bad', 1);
    subs.update('/', 'bad', 0);
    await subs.synced();
    expect(errors).toHaveLength(1);
  });

  it('keeps a channel for the grace after its last member, and cancels it when one returns', async () => {
    const { subs, calls } = setup(40);
    subs.update('/', 'r', 1);
    subs.update('/', 'r', 0);
    expect(subs.lingering).toBe(1);
    expect(subs.holds('/', 'r')).toBe(true);
    subs.update('/', 'r', 1); // back within the grace: no new SUBSCRIBE
    expect(subs.lingering).toBe(0);
    subs.update('/', 'r', 0);
    await new Promise((r) => setTimeout(r, 80));
    await subs.synced();
    expect(calls).toEqual(['+p:room:%2F:r', '-p:room:%2F:r']);
    expect(subs.size).toBe(0);
    expect(subs.holds('/', 'r')).toBe(false);
  });

  it('forgets lingering channels and their timers on clear', () => {
    const { subs, calls } = setup(10_000);
    subs.update('/', 'r', 1);
    subs.update('/', 'r', 0);
    subs.clear();
    expect(subs.lingering).toBe(0);
    expect(subs.size).toBe(0);
    expect(calls).toEqual(['+p:room:%2F:r']);
  });
});
