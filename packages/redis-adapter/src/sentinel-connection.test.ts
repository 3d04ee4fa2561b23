import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:net';
import { SentinelConnection } from './sentinel-connection';

/** A port of 127.0.0.1 where nothing listens (taken, then given back). */
function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('SentinelConnection', () => {
  it('with no sentinel answering: keeps trying, says why, fails commands in time, and closes', async () => {
    const errors: Error[] = [];
    const link = new SentinelConnection(
      {
        masterName: 'mymaster',
        sentinelRootNodes: [{ host: '127.0.0.1', port: await deadPort() }],
        scanInterval: 1000,
        maxReconnectDelay: 50,
        commandTimeout: 300,
        name: 'pkg-test',
        missed: () => Promise.resolve(null),
        historyKeys: () => null,
      },
      (err) => errors.push(err),
    );
    const ready: string[] = [];
    link.on('ready', () => ready.push('ready'));
    const connected = link.connect().then(
      () => 'connected',
      (err: Error) => err.message,
    );
    const subscribed = link.subscribe(['a', 'b'], () => undefined);

    // Every attempt fails and is reported; the link is neither ready nor writable.
    await until(() => errors.length >= 2, 'two reported failures');
    expect(errors.every((e) => e instanceof Error)).toBe(true);
    expect(link.isReady).toBe(false);
    expect(link.writable).toBe(false);
    // A command does not wait for a master that never comes: it fails within commandTimeout.
    await expect(link.publish('a', 'x')).rejects.toThrow(/no answer from the master within 300 ms/);
    await expect(link.evalSha('0'.repeat(40), { keys: ['k'], arguments: [] })).rejects.toThrow(
      /within 300 ms/,
    );

    // close() ends the attempts: the connection and the waiting subscriptions give up.
    await link.close();
    expect(await connected).toMatch(/closed/);
    await expect(subscribed).resolves.toBeUndefined();
    expect(ready).toEqual([]);
    const after = errors.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(errors.length).toBe(after);
    expect(link.isOpen).toBe(false);
  }, 30_000);
});
