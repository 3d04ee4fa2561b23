/**
 * The adapter's link to a Redis Cluster (the `cluster` option): one node-redis cluster
 * client (`createCluster`) that both publishes and subscribes, seen by the rest of the
 * package through the few commands it sends (the `RedisClient` methods used by the adapter,
 * the history store, presence and the cluster-wide requests).
 *
 * - Every channel is a sharded channel: PUBLISH is SPUBLISH and SUBSCRIBE is SSUBSCRIBE.
 *   A subscription asked for in buffer mode (the adapter's channels) is one in Redis too,
 *   so a binary message arrives byte for byte, as on a single Redis (wire.ts).
 *   node-redis keeps one subscribing connection per master, so an application node holds
 *   as many subscribe connections as the cluster has masters, however many rooms it holds.
 * - The history scripts run in their cluster form (cluster-scripts.ts).
 * - Topology changes (a slot migrated, a failover, a master added) are followed by
 *   node-redis; on top of that this link checks every `checkInterval` ms, and whenever a
 *   node comes back, that each channel it was asked for is subscribed on the connection of
 *   the master that owns its slot now, and subscribes it again where not. A channel is
 *   never given up: while the cluster is down its SSUBSCRIBE waits, like the single-Redis
 *   link's offline queue.
 * - `pubSubNumSub` counts the subscribers of a sharded channel on its shard (PUBSUB
 *   SHARDNUMSUB), which is what the cluster-wide requests need to know how many answers to
 *   wait for.
 */
import {
  ClientOfflineError,
  DisconnectsClientError,
  SocketClosedUnexpectedlyError,
  createCluster,
} from 'redis';
import type { Buffer } from 'node:buffer';
import { RoomSequence, type MissedReader, type RawMessage } from './cluster-gaps';
import { RoomMarks, tagOf } from './room-marks';
import { CLAIM_SCRIPT, clusterScriptText, clusterSha } from './cluster-scripts';
import { PUBLISH_SCRIPT, PUBLISH_SHA } from './history-scripts';
import { keySlot } from './key-slot';
import { reconnectDelay } from './options';

export interface ClusterConnectionOptions {
  /** Seed nodes, `redis://host:port` each. */
  readonly rootNodes: readonly string[];
  readonly maxReconnectDelay: number;
  readonly name: string;
  /** How often the subscriptions are checked against the topology, ms. */
  readonly checkInterval: number;
  /** How long one command may wait for its answer, ms. */
  readonly commandTimeout: number;
  /** Reads what a room channel missed (cluster-gaps.ts). */
  readonly missed: MissedReader;
  /** The history keys of a room channel (null for other channels, or without history). */
  readonly historyKeys?: (channel: string) => { meta: string; stream: string } | null;
}

type Listener = (message: RawMessage, channel: string) => void;
/** What node-redis calls: strings, or Buffers for a buffer-mode subscription. */
type NodeListener = (message: RawMessage, channel: string | Buffer) => void;
type Cluster = ReturnType<typeof createClusterClient>;
/** A history script's keys and arguments (Buffers carry a binary frame's parts). */
type ScriptOptions = { keys: string[]; arguments: Array<string | Buffer> };

function createClusterClient(options: ClusterConnectionOptions) {
  return createCluster({
    rootNodes: options.rootNodes.map((url) => ({ url })),
    // A node that stopped answering makes the client read the topology again after this
    // long (node-redis waits 5 s by default), so that a replica that took over is found soon.
    topologyRefreshOnReconnectionAttemptStrategy: options.checkInterval,
    // No command waits forever: a node connection was seen never to answer again after the
    // whole cluster restarted under it.
    commandOptions: { timeout: options.commandTimeout },
    defaults: {
      name: options.name,
      socket: {
        reconnectStrategy: (retries: number) => reconnectDelay(retries, options.maxReconnectDelay),
      },
    },
  });
}

/** The events of the single-Redis client the adapter listens to, and their cluster counterparts. */
const EVENTS: Record<string, readonly string[]> = {
  ready: ['connect', 'node-ready'],
  end: ['disconnect', 'node-disconnect'],
  reconnecting: ['node-reconnecting'],
};

/** How long `close()` waits for pending commands before it cuts the connections, ms. */
const CLOSE_GRACE = 1000;

/**
 * A command that failed because of a change of topology rather than because of itself: its
 * node's connection was cut (the node stopped being a master, or went away) or the slot has
 * no master for a moment. Sending it again reaches the slot's master of now. A script that
 * a master ran just before it died (its answer lost with it) runs twice: when the new master
 * lost the first run, the second takes the same offset and the receiving side drops it as a
 * repeat (cluster-gaps.ts); when the first run is known to be lost (an instance received
 * it), the second comes after it, and the message is delivered twice.
 */
function isTopologyError(err: unknown): boolean {
  if (
    err instanceof DisconnectsClientError ||
    err instanceof SocketClosedUnexpectedlyError ||
    err instanceof ClientOfflineError
  ) {
    return true;
  }
  const message = err instanceof Error ? err.message : '';
  return /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY)\b/.test(message);
}

/** node-redis's internal event that carries listeners to subscribe again elsewhere. */
const RESUBSCRIBE_EVENT = '__resubscribeListeners';

export class ClusterConnection {
  readonly cluster: Cluster;
  readonly #options: ClusterConnectionOptions;
  readonly #onError: (err: Error) => void;
  /** channel -> the listener node-redis holds for it (and its mode): what this node wants to be subscribed to. */
  readonly #wanted = new Map<string, { listener: NodeListener; buffers: boolean }>();
  /** The adapter's listener -> the one node-redis holds (it reads the positions of kept messages). */
  readonly #wrapped = new WeakMap<Listener, NodeListener>();
  /** The kept messages of each room channel, put back in order and completed when some went missing. */
  readonly #sequence: RoomSequence;
  /** channel -> the SSUBSCRIBE under way for it. */
  readonly #pending = new Map<string, Promise<void>>();
  /** What this link knows each room reached (room-marks.ts). */
  readonly #marks: RoomMarks;
  #connecting: Promise<void> | null = null;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  /** Subscriptions made again because they were found missing (for tests and monitoring). */
  resubscribed = 0;

  constructor(options: ClusterConnectionOptions, onError: (err: Error) => void) {
    this.#options = options;
    this.#onError = onError;
    this.cluster = createClusterClient(options);
    this.#sequence = new RoomSequence(options.missed, onError);
    this.#marks = new RoomMarks(this.#sequence);
    this.cluster.on('error', onError);
    this.cluster.on('node-error', onError);
    this.cluster.on('sharded-channel-moved-error', (err: unknown) =>
      onError(err instanceof Error ? err : new Error(String(err))),
    );
    // node-redis subscribes moved listeners again without waiting for the answer; a failure
    // there would be an unhandled rejection. This link does it instead, and keeps trying.
    this.cluster.removeAllListeners(RESUBSCRIBE_EVENT);
    this.cluster.on(RESUBSCRIBE_EVENT, () => this.check());
    this.cluster.on('node-ready', () => this.check());
    // A topology read still under way when the link closed may connect new node clients
    // afterwards (node-redis does not check for a closed cluster there): they are cut as
    // soon as they connect.
    this.cluster.on('node-connect', () => {
      if (this.#closed) this.#cut([]);
    });
  }

  // ------------------------------------------------------------ the client surface

  /** Connected, and every master's command connection is ready. */
  get isReady(): boolean {
    if (this.#closed || !this.cluster.isReady) return false;
    const masters = this.cluster.masters;
    return masters.length > 0 && masters.every((m) => m.client?.isReady === true);
  }

  /**
   * Whether a command may be sent now: connected, and at least one master answers. While one
   * master fails over, the others answer, and a command for its slots waits for the new
   * master (within the command timeout); with every master gone, commands fail at once.
   */
  get writable(): boolean {
    if (this.#closed || !this.cluster.isReady) return false;
    return this.cluster.masters.some((m) => m.client?.isReady === true);
  }

  get isOpen(): boolean {
    return !this.#closed && this.cluster.isOpen;
  }

  /** Connects, trying the seed nodes again with backoff until one answers or the link is closed. */
  connect(): Promise<void> {
    this.#connecting ??= this.#connect();
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    for (let retries = 0; ; retries++) {
      if (this.#closed) throw new Error('the Redis Cluster link was closed');
      try {
        await this.cluster.connect();
        break;
      } catch (err) {
        this.#onError(err instanceof Error ? err : new Error(String(err)));
        await new Promise((r) =>
          setTimeout(r, reconnectDelay(retries, this.#options.maxReconnectDelay)),
        );
      }
    }
    this.#timer = setInterval(() => this.check(), this.#options.checkInterval);
    this.#timer.unref();
    this.check();
  }

  on(event: string, listener: () => void): this {
    if (event === 'error') this.cluster.on('error', listener);
    for (const e of EVENTS[event] ?? []) this.cluster.on(e, listener);
    return this;
  }

  removeAllListeners(): this {
    for (const events of Object.values(EVENTS))
      for (const e of events) this.cluster.removeAllListeners(e);
    return this;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#wanted.clear();
    if (!this.cluster.isOpen) return;
    // A graceful close waits for every pending command, which a node that is gone never
    // answers: give it a moment, then cut what is left. node-redis's close() forgets its node
    // clients before they are closed, so its destroy() afterwards would find none: the clients
    // are taken here first and cut one by one.
    const clients = this.#nodeClients();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.cluster.close().catch(() => undefined),
      new Promise((r) => (timer = setTimeout(r, CLOSE_GRACE))),
    ]);
    clearTimeout(timer);
    this.#cut(clients);
  }

  destroy(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#wanted.clear();
    this.#cut(this.#nodeClients());
  }

  /** Every node connection the cluster client holds now (commands and sharded subscriptions). */
  #nodeClients(): Array<{ isOpen: boolean; destroy(): void }> {
    const out: Array<{ isOpen: boolean; destroy(): void }> = [];
    for (const node of [...this.cluster.masters, ...this.cluster.replicas]) {
      if (node.client !== undefined) out.push(node.client);
      const pubSub = (node as { pubSub?: { client: { isOpen: boolean; destroy(): void } } }).pubSub;
      if (pubSub !== undefined) out.push(pubSub.client);
    }
    return out;
  }

  #cut(clients: ReadonlyArray<{ isOpen: boolean; destroy(): void }>): void {
    if (this.cluster.isOpen) this.cluster.destroy();
    for (const client of [...clients, ...this.#nodeClients()]) {
      if (client.isOpen) client.destroy();
    }
  }

  async publish(channel: string, message: string | Buffer): Promise<number> {
    return Number(await this.#bounded(this.cluster.sPublish(channel, message)));
  }

  /** Subscribers of a sharded channel, counted on its shard. */
  async pubSubNumSub(channel: string): Promise<Record<string, number>> {
    // PUBSUB SHARDNUMSUB names no key: it is sent to the master that owns the channel's slot.
    const owner = this.cluster.slots[keySlot(channel)]?.master;
    if (owner === undefined) throw new Error(`no master serves the slot of ${channel}`);
    const reply = await this.#bounded(
      this.cluster.nodeClient(owner).then((client) => client.pubSubShardNumSub(channel)),
    );
    return { [channel]: Number(reply[channel] ?? 0) };
  }

  /**
   * Resolves once every channel is subscribed on its shard (waiting while the cluster is
   * down). `buffers`: messages are handed on as Buffers (binary-safe), else as strings.
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
    if (!this.cluster.isReady) return; // nothing to undo on a cluster that is not there
    await this.cluster.sUnsubscribe(channel, wrapped, buffers);
  }

  /** Messages filled in because a room's channel missed them (a migration, a resubscription). */
  get filled(): number {
    return this.#sequence.filled;
  }

  #wrap(listener: Listener): NodeListener {
    let wrapped = this.#wrapped.get(listener);
    if (wrapped === undefined) {
      wrapped = (message, channel) => this.#sequence.receive(message, channel.toString(), listener);
      this.#wrapped.set(listener, wrapped);
    }
    return wrapped;
  }

  evalSha(sha: string, options: ScriptOptions): Promise<unknown> {
    return this.#evalSha(this.cluster, sha, options);
  }

  eval(script: string, options: ScriptOptions): Promise<unknown> {
    return this.#eval(this.cluster, script, options);
  }

  /**
   * The history scripts with their replies mapped (the history store reads kept messages as
   * Buffers, so that a binary frame comes back byte for byte).
   */
  withTypeMapping(
    mapping: Parameters<Cluster['withTypeMapping']>[0],
  ): Pick<ClusterConnection, 'evalSha' | 'eval'> {
    const mapped = this.cluster.withTypeMapping(mapping) as unknown as Cluster;
    return {
      evalSha: (sha, options) => this.#evalSha(mapped, sha, options),
      eval: (script, options) => this.#eval(mapped, script, options),
    };
  }

  #evalSha(cluster: Cluster, sha: string, options: ScriptOptions): Promise<unknown> {
    return this.#script(sha === PUBLISH_SHA, options, (o) => cluster.evalSha(clusterSha(sha), o));
  }

  #eval(cluster: Cluster, script: string, options: ScriptOptions): Promise<unknown> {
    return this.#script(script === PUBLISH_SCRIPT, options, (o) =>
      cluster.eval(clusterScriptText(script), o),
    );
  }

  /**
   * Runs a history script with what this link knows the room reached appended (see
   * cluster-scripts.ts), and remembers the position a publish got.
   */
  async #script(
    publishes: boolean,
    options: ScriptOptions,
    run: (options: ScriptOptions) => Promise<unknown>,
  ): Promise<unknown> {
    const tag = tagOf(options.keys[0] ?? '');
    const known = this.#marks.known(tag);
    const args = { keys: options.keys, arguments: [...options.arguments, ...known] };
    const deadline = Date.now() + this.#options.commandTimeout;
    let reply: unknown;
    for (let retries = 0; ; retries++) {
      try {
        reply = await this.#bounded(run(args));
        break;
      } catch (err) {
        // The slot's master changed under the command (its connection was cut because the
        // node is no longer a master, or the node went away before answering): the command
        // goes to the slot's master now, as long as the command's time allows.
        if (this.#closed || !isTopologyError(err) || Date.now() >= deadline) throw err;
        const wait = Math.min(50 * 2 ** retries, 500, Math.max(0, deadline - Date.now()));
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    }
    if (publishes) this.#marks.published(tag, reply);
    return reply;
  }

  /** After a room channel was subscribed again: the room's offset goes past what this link received (cluster-scripts.ts). */
  async #claim(channel: string): Promise<void> {
    if (this.#closed || !this.#wanted.has(channel)) return;
    const keys = this.#options.historyKeys?.(channel) ?? null;
    if (keys === null) return;
    const known = this.#marks.known(tagOf(keys.meta));
    if (known[0] === '' && known[2] === '') return; // nothing known of the room
    try {
      await this.#bounded(
        this.cluster.eval(CLAIM_SCRIPT, { keys: [keys.meta, keys.stream], arguments: known }),
      );
    } catch {
      // Best effort: the next message this link publishes in the room carries the same.
    }
  }

  /** SCAN over every master, one batch of keys at a time. */
  async *scanIterator(options: { MATCH: string; COUNT: number }): AsyncGenerator<string[]> {
    for (const master of [...this.cluster.masters]) {
      const client = await this.#bounded(this.cluster.nodeClient(master));
      const batches = client.scanIterator(options)[Symbol.asyncIterator]();
      for (;;) {
        // Each batch within the command timeout, like every other command of this link.
        const next = await this.#bounded(batches.next());
        if (next.done === true) break;
        yield next.value as string[];
      }
    }
  }

  // The key commands of presence, routed by their key.
  hSet(...args: Parameters<Cluster['hSet']>): ReturnType<Cluster['hSet']> {
    return this.#bounded(this.cluster.hSet(...args));
  }
  hDel(...args: Parameters<Cluster['hDel']>): ReturnType<Cluster['hDel']> {
    return this.#bounded(this.cluster.hDel(...args));
  }
  hGetAll(...args: Parameters<Cluster['hGetAll']>): ReturnType<Cluster['hGetAll']> {
    return this.#bounded(this.cluster.hGetAll(...args));
  }
  pExpire(...args: Parameters<Cluster['pExpire']>): ReturnType<Cluster['pExpire']> {
    return this.#bounded(this.cluster.pExpire(...args));
  }
  pTTL(...args: Parameters<Cluster['pTTL']>): ReturnType<Cluster['pTTL']> {
    return this.#bounded(this.cluster.pTTL(...args));
  }
  del(...args: Parameters<Cluster['del']>): ReturnType<Cluster['del']> {
    return this.#bounded(this.cluster.del(...args));
  }
  multi(): ReturnType<Cluster['multi']> {
    return this.cluster.multi();
  }

  /**
   * A command's answer, or a rejection after `commandTimeout`: node-redis's own timeout does
   * not cover the wait for a node's connection, which was seen to last forever after the
   * whole cluster restarted.
   */
  #bounded<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const limit = this.#options.commandTimeout;
    return new Promise<T>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis Cluster: no answer within ${limit} ms`)),
        limit,
      );
      work.then(resolve, (err: unknown) => {
        // A failure is reported on a later turn of the event loop: a caller that tries again
        // at once (presence does) then never starves the timers of the process.
        setImmediate(() => reject(err));
      });
    }).finally(() => clearTimeout(timer));
  }

  // ------------------------------------------------------------ keeping subscriptions

  /** Subscribe connections this link holds now (one per master with a sharded subscription). */
  get subscribeConnections(): number {
    if (!this.cluster.isReady) return 0;
    return this.cluster.masters.filter((m) => m.pubSub !== undefined).length;
  }

  /** Subscribes again every wanted channel that is not subscribed where its slot lives now. */
  check(): void {
    if (this.#closed || !this.cluster.isReady) return;
    for (const channel of this.#wanted.keys()) {
      if (!this.#pending.has(channel) && !this.#held(channel)) {
        this.resubscribed += 1;
        void this.#subscribe(channel).then(async () => {
          await this.#claim(channel);
          // Messages kept while the channel was not subscribed reach it now, not with the
          // room's next message.
          if (this.#wanted.has(channel) && !this.#closed) this.#sequence.catchUp(channel);
        });
      }
    }
  }

  #held(channel: string): boolean {
    const wanted = this.#wanted.get(channel);
    const owner = this.cluster.slots[keySlot(channel)]?.master;
    const client = owner?.pubSub?.client;
    if (wanted === undefined || client === undefined || !client.isReady) return false;
    const held = client.getPubSubListeners('SHARDED').get(channel);
    const set: ReadonlySet<unknown> | undefined = wanted.buffers ? held?.buffers : held?.strings;
    return set?.has(wanted.listener) === true;
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
          if (this.#connecting !== null) await this.#connecting;
          await this.cluster.sSubscribe(channel, wanted.listener, wanted.buffers);
          return;
        } catch (err) {
          if (this.#closed) return;
          if (retries === 0) this.#onError(err instanceof Error ? err : new Error(String(err)));
          await new Promise((r) =>
            setTimeout(r, reconnectDelay(retries, this.#options.maxReconnectDelay)).unref(),
          );
        }
      }
    })().finally(() => this.#pending.delete(channel));
    this.#pending.set(channel, work);
    return work;
  }
}
