/**
 * The adapter's link to a master named by Redis Sentinel (the `sentinel` option): one
 * node-redis sentinel client (`createSentinel`) that both publishes and subscribes, seen by
 * the rest of the package through the commands it sends, like the cluster link
 * (cluster-connection.ts).
 *
 * - node-redis asks the sentinels for the master, keeps one command connection to it and
 *   one subscribe connection, listens to the sentinels' failover announcements, and after
 *   a failover opens both on the new master and subscribes there again every channel the
 *   old one held. A command sent while the master is gone waits for the new one (bounded
 *   here by `commandTimeout`).
 * - Rooms go over sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis 7; on one master they
 *   filter by channel like PUBLISH/SUBSCRIBE) and the history scripts run in their cluster
 *   form (cluster-scripts.ts): each kept message carries its position on the channel, so a
 *   message kept while the subscriptions moved to the new master is read from the room's
 *   history (cluster-gaps.ts), and a replica that took over without the last writes of its
 *   master (a forced failover: replication is asynchronous) does not hand the lost offsets
 *   out again; they are reported as lost to the clients that recover across them.
 * - The link is ready while node-redis holds a ready connection to the master. node-redis
 *   says nothing when that connection drops without a failover (it only reconnects), so the
 *   link looks at it every `POLL` ms and reports the change (`ready`, `reconnecting`).
 */
import type { Buffer } from 'node:buffer';
import { createSentinel } from 'redis';
import { RoomSequence, type MissedReader, type RawMessage } from './cluster-gaps';
import { RoomMarks, tagOf } from './room-marks';
import { CLAIM_SCRIPT, clusterScriptText, clusterSha } from './cluster-scripts';
import { PUBLISH_SCRIPT, PUBLISH_SHA } from './history-scripts';
import { reconnectDelay } from './options';

export interface SentinelConnectionOptions {
  /** The master set's name, as the sentinels monitor it. */
  readonly masterName: string;
  readonly sentinelRootNodes: ReadonlyArray<{ readonly host: string; readonly port: number }>;
  /** How often node-redis asks the sentinels for the master besides their announcements, ms. */
  readonly scanInterval: number;
  /** Credentials of the data nodes and of the sentinels (absent: none). */
  readonly username?: string;
  readonly password?: string;
  readonly sentinelUsername?: string;
  readonly sentinelPassword?: string;
  readonly maxReconnectDelay: number;
  /** How long one command may wait for its answer, a failover included, ms. */
  readonly commandTimeout: number;
  /** The connections' name (CLIENT SETNAME). */
  readonly name: string;
  /** Reads what a room channel missed (cluster-gaps.ts). */
  readonly missed: MissedReader;
  /** The history keys of a room channel (null for other channels, or without history). */
  readonly historyKeys: (channel: string) => { meta: string; stream: string } | null;
}

type Listener = (message: RawMessage, channel: string) => void;
/** What node-redis calls: strings, or Buffers for a buffer-mode subscription. */
type NodeListener = (message: RawMessage, channel: string | Buffer) => void;
type Sentinel = ReturnType<typeof createSentinelClient>;
/** A history script's keys and arguments (Buffers carry a binary frame's parts). */
type ScriptOptions = { keys: string[]; arguments: Array<string | Buffer> };
/** How replies are read (the history store reads kept messages as Buffers). */
type TypeMapping = Parameters<Sentinel['withTypeMapping']>[0];

function createSentinelClient(options: SentinelConnectionOptions) {
  return createSentinel({
    name: options.masterName,
    sentinelRootNodes: options.sentinelRootNodes.map((n) => ({ host: n.host, port: n.port })),
    // node-redis documents 10 s but scans never unless told: without a scan, a client whose
    // sentinel connection dropped would not hear of a failover again.
    scanInterval: options.scanInterval,
    commandOptions: { timeout: options.commandTimeout },
    // Every command on one reserved master connection, in the order it was sent: without a
    // reserved client, node-redis leases its pooled one to each command asynchronously, and
    // commands sent together (a burst of broadcasts to a room) reach Redis in another order.
    reserveClient: true,
    // node-redis asks the sentinels again about once a second while it has no master, up to
    // this many times, before a command or connect() fails; it says nothing meanwhile (a
    // wrong password stayed silent for 16 s). Rounds past commandTimeout are of no use here.
    maxCommandRediscovers: Math.ceil(options.commandTimeout / 1000) + 1,
    sentinelClientOptions: {
      ...(options.sentinelUsername === undefined ? {} : { username: options.sentinelUsername }),
      ...(options.sentinelPassword === undefined ? {} : { password: options.sentinelPassword }),
    },
    nodeClientOptions: {
      name: options.name,
      ...(options.username === undefined ? {} : { username: options.username }),
      ...(options.password === undefined ? {} : { password: options.password }),
      socket: {
        reconnectStrategy: (retries: number) => reconnectDelay(retries, options.maxReconnectDelay),
      },
    },
  });
}

/** How often the link looks whether its master connection is ready, ms. */
const POLL = 250;
/** How long `close()` waits for pending commands before it cuts the connections, ms. */
const CLOSE_GRACE = 1000;

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

export class SentinelConnection {
  readonly sentinel: Sentinel;
  readonly #options: SentinelConnectionOptions;
  readonly #onError: (err: Error) => void;
  readonly #listeners = new Map<string, Array<() => void>>();
  /** channel -> the listener node-redis holds for it, and its mode. */
  readonly #wanted = new Map<string, { listener: NodeListener; buffers: boolean }>();
  readonly #wrapped = new WeakMap<Listener, NodeListener>();
  readonly #sequence: RoomSequence;
  readonly #pending = new Map<string, Promise<void>>();
  /** What this link knows each room reached (room-marks.ts). */
  readonly #marks: RoomMarks;
  #connecting: Promise<void> | null = null;
  #closed = false;
  #up = false;
  #wasUp = false;
  /** When the master stopped answering (null while it answers, or before the first connection). */
  #downSince: number | null = null;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: SentinelConnectionOptions, onError: (err: Error) => void) {
    this.#options = options;
    this.#onError = onError;
    this.sentinel = createSentinelClient(options);
    this.#sequence = new RoomSequence(options.missed, onError);
    this.#marks = new RoomMarks(this.#sequence);
    // node-redis emits some of its errors as strings.
    this.sentinel.on('error', (err: unknown) => this.#failed(err));
    this.sentinel.on('client-error', (event: { error?: unknown }) => this.#failed(event.error));
    for (const event of ['ready', 'reconnecting', 'topology-change']) {
      this.sentinel.on(event, () => this.#look());
    }
  }

  // ------------------------------------------------------------ the client surface

  /** A ready connection to the master. */
  get isReady(): boolean {
    return !this.#closed && this.sentinel.isReady && this.sentinel.getMasterNode() !== undefined;
  }

  /**
   * Whether a command may be sent now: the master answers, or it stopped answering less than
   * `commandTimeout` ago. During a failover a command waits for the new master (node-redis
   * holds it), as a history script on a Redis Cluster waits for the slot's new master; once
   * the master has been gone for longer, commands fail at once and broadcasts are served
   * locally (the outage rule of one Redis).
   */
  get writable(): boolean {
    if (this.isReady) return true;
    this.#look(); // the master may have gone since the last look
    const since = this.#downSince;
    return since !== null && this.isOpen && Date.now() - since < this.#options.commandTimeout;
  }

  get isOpen(): boolean {
    return !this.#closed && this.sentinel.isOpen;
  }

  /** Connects, asking the sentinels again with backoff until the master answers or the link is closed. */
  connect(): Promise<void> {
    this.#connecting ??= this.#connect();
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    for (let retries = 0; ; retries++) {
      if (this.#closed) throw new Error('the Redis Sentinel link was closed');
      try {
        await this.sentinel.connect();
        // node-redis ends its attempt without an error when it is closed meanwhile.
        if (this.#closed) throw new Error('the Redis Sentinel link was closed');
        break;
      } catch (err) {
        if (this.#closed) throw new Error('the Redis Sentinel link was closed');
        this.#failed(err);
        await new Promise((r) =>
          setTimeout(r, reconnectDelay(retries, this.#options.maxReconnectDelay)).unref(),
        );
      }
    }
    this.#timer = setInterval(() => this.#look(), POLL);
    this.#timer.unref();
    this.#look();
  }

  on(event: string, listener: () => void): this {
    if (event === 'end') this.sentinel.on('end', listener);
    else this.#listeners.set(event, [...(this.#listeners.get(event) ?? []), listener]);
    return this;
  }

  removeAllListeners(): this {
    this.#listeners.clear();
    this.sentinel.removeAllListeners('end');
    return this;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#wanted.clear();
    if (!this.sentinel.isOpen) return;
    // A graceful close waits for every pending command, which a master that is gone never
    // answers: give it a moment, then cut what is left.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.sentinel.close().catch(() => undefined),
      new Promise((r) => (timer = setTimeout(r, CLOSE_GRACE))),
    ]);
    clearTimeout(timer);
    await this.sentinel.destroy().catch(() => undefined);
  }

  destroy(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#wanted.clear();
    void this.sentinel.destroy().catch(() => undefined);
  }

  async publish(channel: string, message: string | Buffer): Promise<number> {
    return Number(await this.#run((c) => c.sPublish(channel, message)));
  }

  /** Subscribers of a sharded channel (PUBSUB SHARDNUMSUB). */
  async pubSubNumSub(channel: string): Promise<Record<string, number>> {
    const reply = await this.#run((c) => c.pubSubShardNumSub(channel));
    return { [channel]: Number(reply[channel] ?? 0) };
  }

  /**
   * Resolves once every channel is subscribed on the master (waiting while there is none).
   * `buffers`: messages are handed on as Buffers (binary-safe), else as strings.
   */
  async subscribe(
    channels: string | readonly string[],
    listener: Listener,
    buffers = false,
  ): Promise<void> {
    const list = typeof channels === 'string' ? [channels] : channels;
    const wrapped = this.#wrap(listener);
    await Promise.all(
      list.map((channel) => {
        this.#wanted.set(channel, { listener: wrapped, buffers });
        this.#marks.subscribed(channel);
        return this.#subscribe(channel);
      }),
    );
  }

  async unsubscribe(channel: string, listener: Listener, buffers = false): Promise<void> {
    const wrapped = this.#wrap(listener);
    if (this.#wanted.get(channel)?.listener === wrapped) this.#wanted.delete(channel);
    this.#marks.unsubscribed(channel);
    // Always told to node-redis, which keeps the listener otherwise and subscribes it again
    // on the next master; while there is no master, the call is not waited for.
    const done = this.#bounded(this.sentinel.sUnsubscribe(channel, wrapped, buffers));
    if (this.isReady) await done;
    else done.catch(() => undefined);
  }

  /** Messages filled in from history because a room's channel missed them. */
  get filled(): number {
    return this.#sequence.filled;
  }

  evalSha(sha: string, options: ScriptOptions): Promise<unknown> {
    return this.#evalSha(sha, options);
  }

  eval(script: string, options: ScriptOptions): Promise<unknown> {
    return this.#eval(script, options);
  }

  /**
   * The history scripts with their replies mapped (the history store reads kept messages as
   * Buffers, so that a binary frame comes back byte for byte).
   */
  withTypeMapping(typeMapping: TypeMapping): Pick<SentinelConnection, 'evalSha' | 'eval'> {
    return {
      evalSha: (sha, options) => this.#evalSha(sha, options, typeMapping),
      eval: (script, options) => this.#eval(script, options, typeMapping),
    };
  }

  #evalSha(sha: string, options: ScriptOptions, typeMapping?: TypeMapping): Promise<unknown> {
    return this.#script(sha === PUBLISH_SHA, options, (o) =>
      this.#run((c) => c.evalSha(clusterSha(sha), o), typeMapping),
    );
  }

  #eval(script: string, options: ScriptOptions, typeMapping?: TypeMapping): Promise<unknown> {
    return this.#script(script === PUBLISH_SCRIPT, options, (o) =>
      this.#run((c) => c.eval(clusterScriptText(script), o), typeMapping),
    );
  }

  scanIterator(options: { MATCH: string; COUNT: number }): AsyncGenerator<string[]> {
    return this.sentinel.scanIterator(options);
  }

  // The key commands of presence.
  hSet(...args: Parameters<Sentinel['hSet']>): ReturnType<Sentinel['hSet']> {
    return this.#run((c) => c.hSet(...args));
  }
  hDel(...args: Parameters<Sentinel['hDel']>): ReturnType<Sentinel['hDel']> {
    return this.#run((c) => c.hDel(...args));
  }
  hGetAll(...args: Parameters<Sentinel['hGetAll']>): ReturnType<Sentinel['hGetAll']> {
    return this.#run((c) => c.hGetAll(...args));
  }
  pExpire(...args: Parameters<Sentinel['pExpire']>): ReturnType<Sentinel['pExpire']> {
    return this.#run((c) => c.pExpire(...args));
  }
  pTTL(...args: Parameters<Sentinel['pTTL']>): ReturnType<Sentinel['pTTL']> {
    return this.#run((c) => c.pTTL(...args));
  }
  del(...args: Parameters<Sentinel['del']>): ReturnType<Sentinel['del']> {
    return this.#run((c) => c.del(...args));
  }
  multi(): ReturnType<Sentinel['multi']> {
    return this.sentinel.multi();
  }

  // ------------------------------------------------------------ positions of rooms

  /** Runs a history script with what this link knows the room reached appended (cluster-scripts.ts). */
  async #script(
    publishes: boolean,
    options: ScriptOptions,
    run: (options: ScriptOptions) => Promise<unknown>,
  ): Promise<unknown> {
    const tag = tagOf(options.keys[0] ?? '');
    const args = {
      keys: options.keys,
      arguments: [...options.arguments, ...this.#marks.known(tag)],
    };
    const reply = await run(args);
    if (publishes) this.#marks.published(tag, reply);
    return reply;
  }

  /**
   * The master came back (a failover, or the same master after a restart): each room's
   * offset goes past what this link received, and what the room's channel missed while the
   * subscriptions moved is read from its history now rather than with its next message.
   */
  #rejoined(): void {
    for (const channel of this.#wanted.keys()) {
      const keys = this.#options.historyKeys(channel);
      if (keys === null) continue;
      const known = this.#marks.known(tagOf(keys.meta));
      const claim =
        known[0] === '' && known[2] === ''
          ? Promise.resolve()
          : this.#run((c) =>
              c.eval(CLAIM_SCRIPT, { keys: [keys.meta, keys.stream], arguments: known }),
            ).then(
              () => undefined,
              () => undefined, // best effort: the next publish here carries the same
            );
      void claim.then(() => {
        if (this.#wanted.has(channel) && !this.#closed) this.#sequence.catchUp(channel);
      });
    }
  }

  // ------------------------------------------------------------ internals

  #wrap(listener: Listener): NodeListener {
    let wrapped = this.#wrapped.get(listener);
    if (wrapped === undefined) {
      wrapped = (message, channel) => this.#sequence.receive(message, channel.toString(), listener);
      this.#wrapped.set(listener, wrapped);
    }
    return wrapped;
  }

  /** One SSUBSCRIBE at a time per channel, tried again with backoff until it holds or is no longer wanted. */
  #subscribe(channel: string): Promise<void> {
    const running = this.#pending.get(channel);
    if (running !== undefined) return running;
    const work = (async () => {
      for (let retries = 0; ; retries++) {
        const wanted = this.#wanted.get(channel);
        if (wanted === undefined || this.#closed) return;
        try {
          await this.connect();
          await this.#bounded(this.sentinel.sSubscribe(channel, wanted.listener, wanted.buffers));
          return;
        } catch (err) {
          if (this.#closed) return;
          if (retries === 0) this.#onError(asError(err));
          await new Promise((r) =>
            setTimeout(r, reconnectDelay(retries, this.#options.maxReconnectDelay)).unref(),
          );
        }
      }
    })().finally(() => this.#pending.delete(channel));
    this.#pending.set(channel, work);
    return work;
  }

  #failed(err: unknown): void {
    if (this.#closed) return;
    this.#onError(asError(err));
    this.#look();
  }

  /** Reports a change of readiness to the listeners (`ready` or `reconnecting`). */
  #look(): void {
    if (this.#closed) return;
    const up = this.isReady;
    if (up === this.#up) return;
    this.#up = up;
    this.#downSince = up ? null : Date.now();
    if (up && this.#wasUp) this.#rejoined();
    if (up) this.#wasUp = true;
    for (const listener of this.#listeners.get(up ? 'ready' : 'reconnecting') ?? []) listener();
  }

  /**
   * A command's answer, or a rejection after `commandTimeout` (a failover included). The
   * command is withdrawn then: node-redis holds a command while the master changes, and one
   * that ran on the new master after its caller gave up (a history script whose message was
   * already served locally) would deliver its message twice.
   */
  #run<T>(command: (client: Sentinel) => Promise<T>, typeMapping?: TypeMapping): Promise<T> {
    const controller = new AbortController();
    const client = this.sentinel.withCommandOptions({
      abortSignal: controller.signal,
      ...(typeMapping === undefined ? {} : { typeMapping }),
    });
    return this.#bounded(command(client as Sentinel), () => controller.abort());
  }

  /** A promise's answer, or a rejection after `commandTimeout`. */
  #bounded<T>(work: Promise<T>, onTimeout?: () => void): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const limit = this.#options.commandTimeout;
    return new Promise<T>((resolve, reject) => {
      timer = setTimeout(() => {
        onTimeout?.();
        reject(new Error(`Redis Sentinel: no answer from the master within ${limit} ms`));
      }, limit);
      work.then(resolve, reject);
    }).finally(() => clearTimeout(timer));
  }
}
