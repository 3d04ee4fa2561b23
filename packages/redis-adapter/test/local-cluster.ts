// A Redis Cluster of its own for a test file: 3 masters and 3 replicas of
// `redis-server --cluster-enabled yes` on free ports of 127.0.0.1 (each port and its
// cluster bus port, port + 10000, checked free), joined with `redis-cli --cluster create`.
// `stop()` kills every process and removes the temporary directory; call it in afterAll,
// and it also runs when the start fails half-way.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from 'redis';
import { redisAnswers, waitFor } from './helpers';

function adminClient(port: number) {
  return createClient({ url: `redis://127.0.0.1:${port}` });
}
type Admin = ReturnType<typeof adminClient>;

function listen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(null));
    srv.listen(port, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === 'object' && address ? address.port : null));
    });
  });
}

/** A free port below 55535 whose cluster bus port (+10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = await listen(0);
    if (port === null || port >= 55535 || taken.has(port)) continue;
    if ((await listen(port + 10000)) === null) continue;
    taken.add(port);
    return port;
  }
  throw new Error('no free port pair (port, port + 10000) below 55535 found');
}

/** Whether `redis-server` and `redis-cli` can be used; under CI=true a missing one fails the run. */
export function clusterToolsAvailableSync(suite: string): boolean {
  const ok = ['redis-server', 'redis-cli'].every(
    (tool) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0,
  );
  if (ok) return true;
  if (process.env['CI'] === 'true') {
    throw new Error(`${suite}: redis-server and redis-cli are required under CI=true.`);
  }
  console.warn(`${suite}: skipped, redis-server or redis-cli is not installed.`);
  return false;
}

export interface ClusterNode {
  readonly id: string;
  readonly port: number;
  readonly master: boolean;
  /** The master's id for a replica. */
  readonly of: string | null;
  readonly slots: string[];
  readonly failed: boolean;
}

export class LocalCluster {
  readonly ports: number[] = [];
  readonly #children = new Map<number, ChildProcess>();
  readonly #dir = mkdtempSync(path.join(tmpdir(), 'pkg-redis-cluster-'));

  static async start(size = 6): Promise<LocalCluster> {
    const cluster = new LocalCluster();
    try {
      const taken = new Set<number>();
      for (let i = 0; i < size; i++) cluster.ports.push(await freeClusterPort(taken));
      await Promise.all(cluster.ports.map((p) => cluster.startNode(p)));
      await run('redis-cli', [
        '--cluster',
        'create',
        ...cluster.ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ]);
      await cluster.waitHealthy();
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  get rootNodes(): string[] {
    return this.ports.slice(0, 3).map((p) => `redis://127.0.0.1:${p}`);
  }

  /** Starts (or starts again, with its saved cluster config) the node on that port. */
  async startNode(port: number): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(this.#dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '1000',
        '--cluster-replica-validity-factor',
        '0',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.#dir,
      ],
      { stdio: 'ignore' },
    );
    this.#children.set(port, child);
    await waitFor(() => redisAnswers(port), `redis-server on port ${port}`);
  }

  /** Kills the node on that port (SIGKILL) and waits for it to be gone. */
  async killNode(port: number): Promise<void> {
    const child = this.#children.get(port);
    this.#children.delete(port);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Stops (SIGSTOP) or lets go on (SIGCONT) the node on that port: frozen, it answers nothing. */
  pauseNode(port: number, paused: boolean): void {
    this.#children.get(port)?.kill(paused ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Kills every node and removes the directory; never throws. */
  async stop(): Promise<void> {
    for (const port of this.#children.keys()) this.pauseNode(port, false);
    await Promise.all([...this.#children.keys()].map((p) => this.killNode(p)));
    rmSync(this.#dir, { recursive: true, force: true });
  }

  /** An admin connection to one node (the caller closes it). */
  async admin(port: number): Promise<Admin> {
    const client = adminClient(port);
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  /** Runs one command on one node. */
  async command(port: number, args: string[]): Promise<unknown> {
    const client = await this.admin(port);
    try {
      return await client.sendCommand(args);
    } finally {
      client.destroy();
    }
  }

  /** The cluster as the node on that port sees it. */
  async nodes(port: number): Promise<ClusterNode[]> {
    const text = String(await this.command(port, ['CLUSTER', 'NODES']));
    return text
      .trim()
      .split('\n')
      .map((line) => {
        const [id, address, flags, of, , , , , ...slots] = line.split(' ');
        return {
          id: id!,
          port: Number(address!.split('@')[0]!.split(':')[1]),
          master: flags!.includes('master'),
          of: of === '-' ? null : of!,
          slots,
          failed: flags!.includes('fail'),
        };
      });
  }

  /** Alive nodes' ports. */
  get alive(): number[] {
    return [...this.#children.keys()];
  }

  /** Waits until every live node says cluster_state:ok and agrees on the owner of every slot. */
  async waitHealthy(limitMs = 20_000): Promise<void> {
    await waitFor(
      async () => {
        for (const port of this.alive) {
          const info = String(await this.command(port, ['CLUSTER', 'INFO']).catch(() => ''));
          if (!info.includes('cluster_state:ok')) return false;
        }
        const views = await Promise.all(
          this.alive.map(async (p) =>
            (await this.nodes(p))
              .filter((n) => n.master && !n.failed && n.slots.length > 0)
              // A node lists its own slots being imported or migrated (`[slot-<-id]`) only on
              // its own line: left out of what the nodes must agree on.
              .map((n) => `${n.port}:${n.slots.filter((r) => !r.startsWith('[')).join(',')}`)
              .sort()
              .join(' '),
          ),
        );
        return views.every((v) => v === views[0]);
      },
      'the cluster to be healthy',
      limitMs,
    );
  }

  /** The healthy master that serves a slot. */
  async masterOf(slot: number): Promise<ClusterNode> {
    const nodes = await this.nodes(this.alive[0]!);
    const found = nodes.find(
      (n) =>
        n.master &&
        !n.failed &&
        n.slots.some((range) => {
          if (range.startsWith('[')) return false;
          const [from, to] = range.split('-').map(Number);
          return slot >= from! && slot <= (to ?? from!);
        }),
    );
    if (!found) throw new Error(`no master serves slot ${slot}`);
    return found;
  }

  /** A replica of that master. */
  async replicaOf(master: ClusterNode): Promise<ClusterNode> {
    const nodes = await this.nodes(master.port);
    const replica = nodes.find((n) => n.of === master.id && !n.failed);
    if (!replica) throw new Error(`master ${master.port} has no replica`);
    return replica;
  }

  /**
   * Moves one slot to another master the way `redis-cli --cluster reshard` does: IMPORTING
   * on the target, MIGRATING on the source, MIGRATE of its keys, then SETSLOT NODE on both
   * and on every other master.
   */
  async migrateSlot(slot: number, toPort: number): Promise<void> {
    const from = await this.masterOf(slot);
    const to = (await this.nodes(toPort)).find((n) => n.port === toPort)!;
    const s = String(slot);
    await this.command(to.port, ['CLUSTER', 'SETSLOT', s, 'IMPORTING', from.id]);
    await this.command(from.port, ['CLUSTER', 'SETSLOT', s, 'MIGRATING', to.id]);
    for (;;) {
      const keys = (await this.command(from.port, [
        'CLUSTER',
        'GETKEYSINSLOT',
        s,
        '100',
      ])) as string[];
      if (keys.length === 0) break;
      await this.command(from.port, [
        'MIGRATE',
        '127.0.0.1',
        String(to.port),
        '',
        '0',
        '5000',
        'KEYS',
        ...keys,
      ]);
    }
    await this.command(to.port, ['CLUSTER', 'SETSLOT', s, 'NODE', to.id]);
    await this.command(from.port, ['CLUSTER', 'SETSLOT', s, 'NODE', to.id]);
    for (const node of await this.nodes(to.port)) {
      if (node.master && !node.failed && node.port !== to.port && node.port !== from.port) {
        await this.command(node.port, ['CLUSTER', 'SETSLOT', s, 'NODE', to.id]).catch(
          () => undefined,
        );
      }
    }
    await this.waitHealthy();
  }

  /** Client connections named `name…` on each live node, with their pub/sub channel counts. */
  async clientsNamed(
    prefix: string,
  ): Promise<Array<{ port: number; name: string; ssub: number; sub: number }>> {
    const out: Array<{ port: number; name: string; ssub: number; sub: number }> = [];
    for (const port of this.alive) {
      const text = String(await this.command(port, ['CLIENT', 'LIST']));
      for (const line of text.trim().split('\n')) {
        const fields = new Map(
          line.split(' ').map((kv) => {
            const at = kv.indexOf('=');
            return [kv.slice(0, at), kv.slice(at + 1)] as const;
          }),
        );
        const name = fields.get('name') ?? '';
        if (!name.startsWith(prefix)) continue;
        out.push({
          port,
          name,
          ssub: Number(fields.get('ssub') ?? 0),
          sub: Number(fields.get('sub') ?? 0) + Number(fields.get('psub') ?? 0),
        });
      }
    }
    return out;
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += String(chunk)));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${err}`)),
    );
  });
}
