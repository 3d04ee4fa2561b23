// A Redis Sentinel set-up of its own for a test file: one master and one replica of
// `redis-server` (no persistence) and three sentinels that monitor them as `mymaster`
// (quorum 2, down after 1 s, failover timeout 3 s), on free ports of 127.0.0.1 in a
// temporary directory. `stop()` kills every process and removes the directory; call it in
// afterAll, and it also runs when the start fails half-way.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from 'redis';
import { Socket } from 'node:net';
import { freePort, waitFor } from './helpers';

export const MASTER_NAME = 'mymaster';

/** Passwords the set requires (`requirepass`): of the data nodes, of the sentinels. */
export interface SentinelSetPasswords {
  readonly password?: string;
  readonly sentinelPassword?: string;
}

/** Whether something on the port answers PING (a refusal for want of a password counts). */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG') || reply.startsWith('-NOAUTH'));
    });
  });
}

export class LocalSentinel {
  /** The two data nodes; the first is the master at the start. */
  readonly dataPorts: number[] = [];
  readonly sentinelPorts: number[] = [];
  readonly #children = new Map<number, ChildProcess>();
  readonly #dir = mkdtempSync(path.join(tmpdir(), 'pkg-redis-sentinel-'));
  readonly #passwords: SentinelSetPasswords;

  private constructor(passwords: SentinelSetPasswords) {
    this.#passwords = passwords;
  }

  static async start(passwords: SentinelSetPasswords = {}): Promise<LocalSentinel> {
    const set = new LocalSentinel(passwords);
    try {
      const taken = new Set<number>();
      const port = async (): Promise<number> => {
        for (;;) {
          const p = await freePort();
          if (!taken.has(p)) {
            taken.add(p);
            return p;
          }
        }
      };
      for (let i = 0; i < 2; i++) set.dataPorts.push(await port());
      for (let i = 0; i < 3; i++) set.sentinelPorts.push(await port());
      const [master, replica] = set.dataPorts as [number, number];
      await set.startData(master, null);
      await set.startData(replica, master);
      await Promise.all(set.sentinelPorts.map((p) => set.#startSentinel(p, master)));
      await set.waitSettled(master);
      return set;
    } catch (err) {
      await set.stop();
      throw err;
    }
  }

  get rootNodes(): Array<{ host: string; port: number }> {
    return this.sentinelPorts.map((port) => ({ host: '127.0.0.1', port }));
  }

  /** Starts (or starts again) a data node, as a replica of `of` when given. */
  async startData(port: number, of: number | null): Promise<void> {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly'];
    // A replica syncs at once (Redis 7 waits 5 s by default before the first full sync).
    args.push('no', '--dir', this.#dir, '--repl-diskless-sync-delay', '0');
    if (of !== null) args.push('--replicaof', '127.0.0.1', String(of));
    const password = this.#passwords.password;
    if (password !== undefined) args.push('--requirepass', password, '--masterauth', password);
    this.#children.set(port, spawn('redis-server', args, { stdio: 'ignore' }));
    await waitFor(() => answers(port), `redis-server on port ${port}`);
  }

  async #startSentinel(port: number, master: number): Promise<void> {
    const file = path.join(this.#dir, `sentinel-${port}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${this.#dir}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master} 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
        `sentinel failover-timeout ${MASTER_NAME} 3000`,
        `logfile ${this.#log(port)}`,
        ...(this.#passwords.password === undefined
          ? []
          : [`sentinel auth-pass ${MASTER_NAME} ${this.#passwords.password}`]),
        // Sentinels use their own password with each other too.
        ...(this.#passwords.sentinelPassword === undefined
          ? []
          : [`requirepass ${this.#passwords.sentinelPassword}`]),
        '',
      ].join('\n'),
    );
    this.#children.set(port, spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' }));
    await waitFor(() => answers(port), `redis-sentinel on port ${port}`);
  }

  #log(port: number): string {
    return path.join(this.#dir, `sentinel-${port}.log`);
  }

  /** The sentinels' events so far (`+switch-master`, `-failover-abort-...`), for error messages. */
  events(): string {
    return this.sentinelPorts
      .flatMap((port) =>
        existsSync(this.#log(port))
          ? readFileSync(this.#log(port), 'utf8')
              .split('\n')
              .filter((line) => / # [+-]/.test(line))
              .map((line) => `${port}: ${line.slice(line.indexOf(' # ') + 3)}`)
          : [],
      )
      .join('\n');
  }

  /** Whether a process runs on that port (started here and not killed). */
  alive(port: number): boolean {
    return this.#children.has(port);
  }

  /**
   * Brings the set back to a master and a synced replica: a data node that was killed is
   * started again as a replica of the master the sentinels name.
   */
  async heal(): Promise<void> {
    await waitFor(
      async () => this.alive(await this.master()),
      'the sentinels to name a live master',
      20_000,
    );
    const master = await this.master();
    for (const port of this.dataPorts) {
      if (!this.alive(port)) await this.startData(port, master);
    }
    // On a loaded machine the sentinels were seen to take more than 20 s to agree again
    // after the tests that kill or restart the master, and to fail over once more meanwhile:
    // the set is healed on whichever master they settle on.
    await this.waitSettled(null, 40_000);
  }

  /** Kills the process on that port (SIGKILL) and waits for it to be gone. */
  async kill(port: number): Promise<void> {
    const child = this.#children.get(port);
    this.#children.delete(port);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Stops (SIGSTOP) or lets go on (SIGCONT) the process on that port. */
  pause(port: number, paused: boolean): void {
    this.#children.get(port)?.kill(paused ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Kills every process and removes the directory; never throws. */
  async stop(): Promise<void> {
    for (const port of this.#children.keys()) this.pause(port, false);
    await Promise.all([...this.#children.keys()].map((p) => this.kill(p)));
    rmSync(this.#dir, { recursive: true, force: true });
  }

  /** Runs one command on one process. */
  async command(port: number, args: string[]): Promise<unknown> {
    const password = this.sentinelPorts.includes(port)
      ? this.#passwords.sentinelPassword
      : this.#passwords.password;
    const client = createClient({
      url: `redis://127.0.0.1:${port}`,
      ...(password === undefined ? {} : { password }),
    });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await client.sendCommand(args);
    } finally {
      client.destroy();
    }
  }

  /** The master's port as a live sentinel names it. */
  async master(): Promise<number> {
    for (const port of this.sentinelPorts) {
      if (!this.#children.has(port)) continue;
      const reply = (await this.command(port, [
        'SENTINEL',
        'GET-MASTER-ADDR-BY-NAME',
        MASTER_NAME,
      ]).catch(() => null)) as string[] | null;
      if (reply) return Number(reply[1]);
    }
    throw new Error('no sentinel answers');
  }

  /**
   * Waits until every live sentinel names `master` (null: the master a sentinel names now,
   * read again on each look), the master says it is one, the other data node is its replica
   * with the replication link up, and every sentinel knows that replica (so that a failover
   * can happen without losing what was written so far).
   */
  async waitSettled(wanted: number | null, limitMs = 20_000): Promise<void> {
    let last = '';
    await waitFor(
      async () => {
        const master = wanted ?? (await this.master().catch(() => 0));
        if (master === 0) {
          last = 'no sentinel answers';
          return false;
        }
        const role = String(await this.command(master, ['ROLE']).catch(() => ''));
        if (!role.startsWith('master')) {
          last = `${master} says ROLE ${role}`;
          return false;
        }
        for (const port of this.dataPorts) {
          if (port === master || !this.#children.has(port)) continue;
          const info = String(await this.command(port, ['INFO', 'replication']).catch(() => ''));
          if (!info.includes(`master_port:${master}`) || !info.includes('master_link_status:up')) {
            last = `replica ${port}: ${info.replace(/\s+/g, ' ').slice(0, 200)}`;
            return false;
          }
        }
        for (const port of this.sentinelPorts) {
          if (!this.#children.has(port)) continue;
          const info = String(await this.command(port, ['INFO', 'sentinel']).catch(() => ''));
          if (!info.includes(`address=127.0.0.1:${master},slaves=1,sentinels=3`)) {
            last = `sentinel ${port}: ${/master0:\S+/.exec(info)?.[0] ?? info.slice(0, 200)}`;
            return false;
          }
        }
        return true;
      },
      `the sentinels to agree on master ${wanted ?? '(any)'}`,
      limitMs,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last seen: ${last}`);
    });
  }
}
