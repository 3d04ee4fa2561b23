// A rolling restart behind nginx: 1,000 @pkg/client clients (Node, `ws`) spread over two
// demo instances that share Redis; one instance is closed (close 1012 with a reconnect hint
// spread over RESTART_SPREAD) and started again on its port. Every client of the stopped
// instance gets a hint within the window (stratified: spread evenly, never all at once) and
// schedules its return at hint + jitter, so within the window + its jitter; none is lost:
// all come back and a broadcast afterwards reaches all 1,000. (How long the return takes
// on the wall clock depends on the machine, so it is reported by the bench, not asserted.)
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { Client, type ClientOptions } from '@pkg/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  bundleInstance,
  nginxSuiteAvailable,
  startInstance,
  startNginx,
  waitUntil,
  type InstanceProcess,
  type RunningNginx,
} from './helpers/nginx';

const { nginx, ok } = nginxSuiteAvailable('rolling restart behind nginx');
const describeE2e = ok ? describe : describe.skip;

const CLIENTS = 1000;
/** Client addresses 127.0.0.10-49: nginx's `hash $remote_addr` spreads them over both. */
const ADDRESSES = 40;
const SPREAD_MS = 3000;
const JITTER_MS = 500; // the clients' reconnectionDelay

/** A `ws` WebSocket bound to one loopback address, as @pkg/client's WebSocket option. */
function boundTo(address: string): NonNullable<ClientOptions['WebSocket']> {
  return class extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols, { localAddress: address });
    }
  } as unknown as NonNullable<ClientOptions['WebSocket']>;
}

const INSTANCE = {
  host: '127.0.0.1',
  trustProxy: ['127.0.0.1'],
  redisUrl: 'redis://127.0.0.1:6379',
  maxConnectionsPerIp: 0,
  restartSpread: SPREAD_MS,
};

/** The open WebSocket clients of the instance on `port`, from its health document. */
async function openClients(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/health`);
  return ((await res.json()) as { server: { clients: number } }).server.clients;
}

interface Tracked {
  readonly client: Client;
  closes: Array<{ code: number; reason: string; at: number }>;
  reconnectedAt: number | null;
  messages: string[];
  /** The delay of each retry the client scheduled (its `reconnecting` events). */
  retries: number[];
}

describeE2e('a rolling restart behind nginx', () => {
  // The instances run in their own processes (bundled from the sources), so that the
  // 1,000 clients of this process do not share an event loop with the servers.
  const dir = mkdtempSync(path.join(tmpdir(), 'pkg-rolling-'));
  const script = bundleInstance(dir);
  const instances: InstanceProcess[] = [];
  let proxy: RunningNginx;
  const tracked: Tracked[] = [];

  beforeAll(async () => {
    instances.push(
      await startInstance(script, { ...INSTANCE, port: 0 }),
      await startInstance(script, { ...INSTANCE, port: 0 }),
    );
    proxy = await startNginx(nginx!, [instances[0]!.port, instances[1]!.port]);
  }, 30_000);

  afterAll(async () => {
    for (const t of tracked) t.client.disconnect();
    await proxy?.stop();
    for (const instance of instances) await instance.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('brings every client of the restarted instance back after its hint + jitter, none lost', async () => {
    const url = `ws://127.0.0.1:${proxy.port}/`;
    for (let i = 0; i < CLIENTS; i++) {
      const client = new Client(url, {
        WebSocket: boundTo(`127.0.0.${10 + (i % ADDRESSES)}`),
        network: null,
        reconnectionDelay: JITTER_MS,
      });
      const t: Tracked = { client, closes: [], reconnectedAt: null, messages: [], retries: [] };
      client.on('reconnecting', ({ delay }) => t.retries.push(delay));
      client.on('disconnect', ({ code, reason }) =>
        t.closes.push({ code, reason, at: Date.now() }),
      );
      client.on('reconnect', () => {
        t.reconnectedAt = Date.now();
      });
      client.on('api.message', (data) => t.messages.push((data as { message: string }).message));
      tracked.push(t);
    }
    // Connected 100 at a time, as a fleet of browsers would arrive.
    for (let i = 0; i < CLIENTS; i += 100) {
      await Promise.all(tracked.slice(i, i + 100).map((t) => t.client.connect()));
    }
    const [first, second] = instances as [InstanceProcess, InstanceProcess];
    await waitUntil(
      async () => (await openClients(first.port)) + (await openClients(second.port)) === CLIENTS,
      'all clients open on the instances',
    );
    const onFirst = await openClients(first.port);
    // Both instances hold a share, so the restart moves some clients and not others.
    expect(onFirst).toBeGreaterThan(0);
    expect(await openClients(second.port)).toBeGreaterThan(0);

    // The deploy: SIGTERM to the first instance (a graceful close), then the new release
    // started on its port.
    await first.stop();
    instances[0] = await startInstance(script, { ...INSTANCE, port: first.port });

    const moved = tracked.filter((t) => t.closes.length > 0);
    expect(moved).toHaveLength(onFirst);
    await waitUntil(
      () => moved.every((t) => t.reconnectedAt !== null),
      'every moved client to reconnect',
      60_000,
    );
    const hints: number[] = [];
    for (const t of moved) {
      expect(t.closes[0]!.code).toBe(1012);
      const hint = /^restart; retry after (\d+) ms$/.exec(t.closes[0]!.reason);
      expect(hint).not.toBeNull();
      const ms = Number(hint![1]);
      expect(ms).toBeLessThanOrEqual(SPREAD_MS);
      hints.push(ms);
      // The client came back after the hint plus its jitter: its first retry was scheduled
      // inside [hint, hint + reconnectionDelay), so within the window + the jitter.
      expect(t.retries[0]).toBeGreaterThanOrEqual(ms);
      expect(t.retries[0]).toBeLessThan(ms + JITTER_MS);
    }
    // Spread over the window: a quarter of the hints in each quarter of it, give or take
    // two clients (the server stratifies them), never all at once.
    for (let q = 0; q < 4; q++) {
      const inQuarter = hints.filter(
        (h) => h >= (q * SPREAD_MS) / 4 && h < ((q + 1) * SPREAD_MS) / 4,
      ).length;
      expect(Math.abs(inQuarter - onFirst / 4)).toBeLessThanOrEqual(2);
    }

    // None lost: every client is connected, and a broadcast reaches all 1,000.
    expect(tracked.filter((t) => !t.client.connected)).toHaveLength(0);
    await waitUntil(
      async () =>
        (await openClients(instances[0]!.port)) + (await openClients(second.port)) === CLIENTS,
      'every client open on an instance again',
    );
    const posted = await fetch(`http://127.0.0.1:${second.port}/api/broadcast`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'after the restart' }),
    });
    expect(posted.status).toBe(200);
    await waitUntil(
      () => tracked.every((t) => t.messages.includes('after the restart')),
      'the broadcast at every client',
    );
    // Clients that stayed on the other instance were never disconnected.
    expect(tracked.filter((t) => t.closes.length > 0)).toHaveLength(onFirst);
  }, 90_000);
});
