/**
 * `RedisAdapter`, the adapter interface of @pkg/core over Redis pub/sub. Kept whole
 * although it is a little over 400 lines: every method is one operation of the `Adapter`
 * interface, a few lines each with its doc comment; membership, channel names, cluster
 * requests, the link state and room history (history-store.ts) already live in their own
 * modules, and what is here of history is the wiring of its store.
 */
import {
  DEFAULT_NAMESPACE,
  LocalAdapter,
  Logger,
  type Adapter,
  type AdapterHost,
  type AdapterState,
  type BroadcastTarget,
  type ClusterQueryResult,
  type CountTarget,
  type LoggerInterface,
  type RemoteClientOperation,
  type SerializedMessage,
} from '@pkg/core';
import { Buffer } from 'node:buffer';
import { closeConnection, createConnection, type RedisClient } from './connection';
import { ClusterChannels } from './cluster-channels';
import { ClusterConnection } from './cluster-connection';
import { SentinelConnection } from './sentinel-connection';
import { answerRequest, type LocalOperations } from './answer-request';
import { createRedisError } from './errors';
import { ClusterRequests, forwardRequest, wireTarget } from './cluster-requests';
import { LinkState } from './link-state';
import { Subscriptions } from './subscriptions';
import { RedisPresence } from './presence';
import { ChannelMembership } from './membership';
import { HISTORY_META_GRACE, RedisHistoryStore, type RedisHistoryStats } from './history-store';
import {
  resolveAdapterOptions,
  type RedisAdapterOptions,
  type ResolvedRedisAdapterOptions,
} from './options';
import {
  Channels,
  decodeBroadcast,
  decodeReply,
  decodeRequest,
  encodeBroadcast,
  encodeReply,
  type QueryBody,
  type ReplyMessage,
  type RequestBody,
} from './wire';

/**
 * Counters of what the adapter did, e.g. to check that nothing leaks or to export metrics.
 * The history counters stay 0 with `history: false`.
 */
export interface RedisAdapterStats extends RedisHistoryStats {
  /** The link to Redis (see `AdapterState`). */
  readonly state: AdapterState;
  /** Channels this instance is subscribed to: three fixed ones plus one per local namespace and room (lingering ones included). */
  readonly subscriptions: number;
  /** Namespace/room channels without local members, still subscribed until `unsubscribeGrace` runs out. */
  readonly lingering: number;
  /** Joins refused because the client was over `maxSubscribesPerSecond`. */
  readonly refusedJoins: number;
  /** Broadcasts published for the other instances. */
  readonly published: number;
  /** Broadcasts received from other instances (own echoes not counted). */
  readonly received: number;
  /** Own broadcasts that came back from Redis and were ignored. */
  readonly echoesIgnored: number;
  /** Messages for other instances lost because Redis could not be reached (never queued). */
  readonly lost: number;
  /** Messages from Redis dropped because they were malformed, foreign or of an unknown version. */
  readonly dropped: number;
  /** Cluster-wide requests waiting for their answers now. */
  readonly pendingRequests: number;
}

const FIXED_SUBSCRIPTIONS = 3;
/** The most messages a room's channel may miss on a Redis Cluster and still get from history. */
const MAX_FILLED = 10_000;

function exceptList(except: BroadcastTarget['except']): string[] {
  if (except === undefined) return [];
  return typeof except === 'string' ? [except] : [...except];
}

/**
 * A cluster `Adapter` over Redis pub/sub: several processes or machines act as one server.
 *
 * - A broadcast is delivered to local clients at once and published once, on the channel of
 *   its target: all clients, one namespace, or one room. An instance subscribes to a
 *   namespace or room channel only while it has local members there, so instances without
 *   members receive nothing for it. Every instance delivers to its own members (minus
 *   `except`) and ignores its own echo, so each client gets the message exactly once.
 * - `clientCount`, `clientIds` and `forward` (send / disconnect / join / leave for a client
 *   of another instance) ask every instance and wait at most `requestTimeout`.
 * - When Redis goes away, local traffic continues; messages for the other instances are
 *   counted as lost and logged, never queued; the state is `degraded`; node-redis reconnects
 *   and restores the subscriptions by itself.
 *
 * ```ts
 * const adapter = new RedisAdapter({ url: process.env.REDIS_URL });
 * server.setAdapter(adapter);
 * await server.run();
 * await adapter.ready();
 * ```
 */
export class RedisAdapter implements Adapter {
  /** This instance's id on the wire. */
  readonly nodeId: string;
  /**
   * Room history in Redis Streams, shared by every instance (absent with `history: false`):
   * the server keeps the rooms its `history` config names here, so a client recovers them
   * on any instance.
   */
  readonly history?: RedisHistoryStore;
  readonly #options: ResolvedRedisAdapterOptions;
  readonly #channels: Channels;
  readonly #local = new LocalAdapter();
  #host: AdapterHost | null = null;
  #logger: LoggerInterface | null;
  #pub: RedisClient | null = null;
  #sub: RedisClient | null = null;
  #subscriptions: Subscriptions | null = null;
  /** The Redis Cluster or Redis Sentinel link (both #pub and #sub) in those modes. */
  #clusterLink: ClusterConnection | SentinelConnection | null = null;
  readonly #requests: ClusterRequests;
  readonly #membership: ChannelMembership;
  readonly #link: LinkState;
  /**
   * Presence shared between instances (presence.ts), started by the server when its
   * `presence` setting names rooms; `presence.stats()` for monitoring.
   */
  readonly presence: RedisPresence;
  #ready: Promise<void> | null = null;
  #counters = {
    published: 0,
    received: 0,
    echoesIgnored: 0,
    dropped: 0,
  };
  /**
   * Every channel of the adapter is subscribed in buffer mode (on one Redis or a Redis
   * Cluster): a binary message arrives byte for byte; requests, replies and texts are read
   * as UTF-8 from the bytes.
   */
  readonly #onMessage = (message: string | Buffer, channel: string | Buffer): void =>
    this.#receive(message, typeof channel === 'string' ? channel : channel.toString('utf8'));
  /** What this instance does for requests from the others. */
  readonly #operations: LocalOperations = {
    count: (target) => this.#local.clientCount(target),
    ids: (target) => this.#local.clientIds(target),
    hasClient: (clientId) => this.#isLocal(clientId),
    deliver: (clientId, text) => (this.#host?.deliver([clientId], text) ?? 0) > 0,
    disconnect: (clientId) => this.#host?.disconnect?.(clientId) ?? false,
    joinRoom: (clientId, room, namespace) => {
      try {
        this.joinRoom(clientId, room, namespace);
      } catch (err) {
        // Refused here like a local join (a name, the room cap, the subscribe budget): the
        // client was found, nothing changed, and a message handler must never throw.
        this.#log().warning('RedisAdapter: a join asked by another instance was refused', {
          clientId,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    },
    leaveRoom: (clientId, room, namespace) => this.leaveRoom(clientId, room, namespace),
    revoke: (identity, room, namespace) => this.#host?.revoke?.(identity, room, namespace) ?? 0,
  };

  constructor(options: RedisAdapterOptions = {}) {
    this.#options = resolveAdapterOptions(options);
    this.nodeId = this.#options.nodeId;
    this.#channels =
      this.#options.cluster || this.#options.sentinel
        ? new ClusterChannels(this.#options.keyPrefix)
        : new Channels(this.#options.keyPrefix);
    this.#requests = new ClusterRequests(this.nodeId, this.#channels, this.#options.requestTimeout);
    this.#logger = this.#options.logger;
    this.#link = new LinkState(this.nodeId, () => this.#log());
    this.presence = new RedisPresence({
      keyPrefix: this.#options.keyPrefix,
      nodeId: this.nodeId,
      pub: () => (this.#pub?.isReady === true ? this.#pub : null),
      subscribe: (channel, listener) =>
        this.#sub === null
          ? Promise.reject(this.#notAttached('presence'))
          : this.#sub.subscribe(channel, listener),
      log: () => this.#log(),
    });
    this.#membership = new ChannelMembership({
      local: this.#local,
      maxSubscribesPerSecond: this.#options.maxSubscribesPerSecond,
      log: () => this.#log(),
      notAttached: (method) => this.#notAttached(method),
    });
    if (this.#options.history) {
      this.history = new RedisHistoryStore({
        nodeId: this.nodeId,
        channels: this.#channels,
        readTimeout: this.#options.requestTimeout,
        client: () => this.#pub,
        writable: () => this.#clusterLink?.writable ?? this.#pub?.isReady === true,
        echoes: (channel) =>
          this.#sub?.isReady === true && this.#subscriptions?.confirmed(channel) === true,
        deliverLocal: (text, target) => this.#local.broadcast(text, target),
        log: () => this.#log(),
      });
    }
  }

  // ------------------------------------------------------------ lifecycle

  /** Called by the server: connects to Redis (in the background) and subscribes. */
  attach(host: AdapterHost): Promise<void> {
    if (this.#host) {
      throw createRedisError(
        Error,
        'PKG_ERR_REDIS_INVALID_OPTION',
        'RedisAdapter: already attached to a server; use one adapter per server.',
      );
    }
    this.#host = host;
    this.#local.attach(host);
    this.#logger ??= host.logger ?? new Logger('info', true, false);
    const [pub, sub] = this.#connections();
    this.#pub = pub;
    this.#sub = sub;
    this.#subscriptions = new Subscriptions(
      this.#channels,
      {
        subscribe: (channel) => sub.subscribe(channel, this.#onMessage, true),
        unsubscribe: (channel) => sub.unsubscribe(channel, this.#onMessage, true),
      },
      (err) => this.#link.failed(err, this.#isUp()),
      this.#options.unsubscribeGrace,
    );
    this.#membership.attach(host, this.#subscriptions);
    const linkChanged = (): void => {
      this.#link.update(this.#isUp());
      this.presence.linkChanged(this.#isUp());
    };
    for (const client of [pub, sub]) {
      client.on('ready', linkChanged);
      client.on('end', linkChanged);
      client.on('reconnecting', linkChanged);
    }
    const connected = Promise.all([pub.connect(), sub.connect()]);
    const fixed = [
      this.#channels.all,
      this.#channels.requests,
      this.#channels.replies(this.nodeId),
    ];
    const subscribed = sub.subscribe(fixed, this.#onMessage, true);
    this.#ready = Promise.all([connected, subscribed]).then(linkChanged);
    // A failure here is logged through the client's error listener; reconnection goes on.
    this.#ready.catch(() => undefined);
    return Promise.resolve();
  }

  /** Resolves once both connections are up and the fixed channels are subscribed. */
  ready(): Promise<void> {
    if (!this.#ready) return Promise.reject(this.#notAttached('ready'));
    return this.#ready;
  }

  /**
   * Resolves once every subscription change made so far (a first member joined a room, the
   * last one left) has been confirmed by Redis. Until then a message from another instance
   * to a room that just got its first member here can miss it.
   */
  async synced(): Promise<void> {
    await this.#subscriptions?.synced();
  }

  /** The link to Redis: `connecting`, `connected`, `degraded` or `closed`. */
  getState(): AdapterState {
    return this.#link.state;
  }

  /** Counters for monitoring and tests. */
  stats(): RedisAdapterStats {
    return {
      state: this.#link.state,
      subscriptions:
        (this.#subscriptions?.size ?? 0) +
        (this.#link.state === 'closed' ? 0 : FIXED_SUBSCRIPTIONS),
      lingering: this.#subscriptions?.lingering ?? 0,
      refusedJoins: this.#membership.refusedJoins,
      ...this.#counters,
      lost: this.#link.lost,
      pendingRequests: this.#requests.size,
      ...(this.history?.stats() ?? {
        historyWrites: 0,
        historyWriteFailures: 0,
        historyReadFailures: 0,
      }),
    };
  }

  /** Unsubscribes, fails pending requests with `PKG_ERR_REDIS_CLOSED`, and closes both connections. */
  async close(): Promise<void> {
    if (this.#link.state === 'closed') return;
    await this.presence.close();
    this.#link.close();
    this.#requests.failAll(() =>
      createRedisError(
        Error,
        'PKG_ERR_REDIS_CLOSED',
        'RedisAdapter: closed while a cluster-wide request was waiting for its answers.',
      ),
    );
    this.#subscriptions?.clear();
    const clients = [this.#sub, this.#pub].filter((c): c is RedisClient => c !== null);
    this.#sub = null;
    this.#pub = null;
    await Promise.all(clients.map((c) => closeConnection(c)));
    for (const c of clients) {
      c.removeAllListeners();
      c.on('error', () => undefined); // a late socket error must not become an uncaught one
    }
    this.#local.close();
  }

  // ------------------------------------------------------------ membership (membership.ts)

  joinNamespace(clientId: string, namespace: string): void {
    this.#membership.joinNamespace(clientId, namespace);
  }

  leaveNamespace(clientId: string, namespace?: string): void {
    this.#membership.leaveNamespace(clientId, namespace);
  }

  /** Refused (`PKG_ERR_REDIS_TOO_MANY_SUBSCRIBES`) when the client is over `maxSubscribesPerSecond`. */
  joinRoom(clientId: string, room: string, namespace: string): void {
    this.#membership.joinRoom(clientId, room, namespace);
  }

  leaveRoom(clientId: string, room: string, namespace: string): void {
    this.#membership.leaveRoom(clientId, room, namespace);
  }

  leaveAllRooms(clientId: string): void {
    this.#membership.leaveAllRooms(clientId);
  }

  removeClient(clientId: string): void {
    this.#membership.removeClient(clientId);
  }

  // ------------------------------------------------------------ broadcast

  /**
   * Delivers to local clients at once, then publishes once for the other instances: a text
   * as it is, a binary frame as its bytes (see wire.ts).
   */
  broadcast(text: SerializedMessage, target: BroadcastTarget): number {
    const delivered = this.#local.broadcast(text, target);
    let channel: string;
    if (target.room != null)
      channel = this.#channels.room(target.namespace ?? DEFAULT_NAMESPACE, target.room);
    else if (target.namespace != null) channel = this.#channels.namespace(target.namespace);
    else channel = this.#channels.all;
    this.#publish(
      channel,
      encodeBroadcast(this.nodeId, exceptList(target.except), text, {
        trace: target.trace,
        sentAt: Date.now(),
      }),
    );
    return delivered;
  }

  // ------------------------------------------------------------ cluster-wide requests

  /** Clients the target selects on every instance. Rejects when Redis is unreachable or an instance does not answer in time. */
  async clientCount(target: CountTarget = {}): Promise<number> {
    const replies = await this.#ask({ kind: 'count', target: wireTarget(target) }, false);
    return replies.reduce((sum, r) => sum + (r.count ?? 0), 0);
  }

  /** Ids of the clients the target selects on every instance. */
  async clientIds(target: CountTarget = {}): Promise<string[]> {
    const replies = await this.#ask({ kind: 'ids', target: wireTarget(target) }, false);
    return replies.flatMap((r) => r.ids ?? []);
  }

  /** Carries out an operation on a client of another instance; true when some instance had it. */
  async forward(operation: RemoteClientOperation): Promise<boolean> {
    const replies = await this.#ask(forwardRequest(operation), true);
    return replies.some((r) => r.found === true);
  }

  /**
   * `server.revoke` on every other instance: each takes the identity's connections out of
   * the room (or sends them away). Resolves with how many connections they reached; rejects
   * when Redis is unreachable or an instance does not answer in time.
   */
  async revoke(identity: string, room: string | null, namespace: string | null): Promise<number> {
    const replies = await this.#ask({ kind: 'revoke', identity, room, namespace }, false);
    return replies.reduce((sum, r) => sum + (r.count ?? 0), 0);
  }

  /**
   * `server.queryCluster`: every instance (this one included) answers `topic` for itself;
   * resolves with the answers that came within `timeout` ms and how many instances did not
   * answer. Rejects when Redis is unreachable.
   */
  async query(topic: string, payload: unknown, timeout: number): Promise<ClusterQueryResult> {
    this.#require('query');
    const { replies, expected } = await this.#requests.gather(
      { pub: this.#pub, state: this.#link.state },
      { kind: 'query', topic, payload },
      timeout,
    );
    return {
      answers: replies.map((r) =>
        r.error === undefined
          ? { node: r.origin, data: r.data ?? null }
          : { node: r.origin, error: r.error },
      ),
      missing: Math.max(0, expected - replies.length),
    };
  }

  #ask(body: RequestBody, stopOnFound: boolean): Promise<ReplyMessage[]> {
    this.#require(body.kind);
    return this.#requests.ask({ pub: this.#pub, state: this.#link.state }, body, stopOnFound);
  }

  // ------------------------------------------------------------ receiving

  #receive(raw: string | Buffer, channel: string): void {
    const text = (): string => (typeof raw === 'string' ? raw : raw.toString('utf8'));
    if (channel === this.#channels.requests) this.#onRequest(raw);
    else if (channel === this.#channels.replies(this.nodeId)) this.#onReply(text());
    else this.#onBroadcast(raw, channel);
  }

  #onBroadcast(raw: string | Uint8Array, channel: string): void {
    const decoded = decodeBroadcast(raw);
    if (!decoded.ok) return this.#drop(channel, decoded.reason);
    const message = decoded.value;
    // A kept message comes back to its origin too: every instance delivers a room's kept
    // messages in the order of their positions (history-store.ts).
    if (message.origin === this.nodeId && !message.self) {
      this.#counters.echoesIgnored += 1;
      return;
    }
    const target =
      channel === this.#channels.all
        ? { namespace: null, room: null }
        : this.#subscriptions?.targetOf(channel);
    if (!target) return; // unsubscribed meanwhile: nobody here to deliver to
    if (message.origin !== this.nodeId) {
      this.#counters.received += 1;
      // Publish to delivery across instances (the origin's clock against this one's).
      if (message.sentAt !== undefined) {
        this.#host?.crossInstanceLatency?.(Math.max(0, Date.now() - message.sentAt));
      }
    }
    const deliver = (): number =>
      this.#local.broadcast(message.text, { ...target, except: message.except });
    // A broadcast made inside a trace: the delivery here joins it (a span, with tracing on).
    const runTraced = this.#host?.runTraced;
    if (message.trace !== undefined && runTraced !== undefined) {
      runTraced.call(this.#host, message.trace, message.text, deliver);
    } else deliver();
  }

  #onRequest(raw: string | Uint8Array): void {
    const decoded = decodeRequest(raw);
    if (!decoded.ok) return this.#drop(this.#channels.requests, decoded.reason);
    const { origin, id, body } = decoded.value;
    if (!this.#host) return;
    if (body.kind === 'query') return this.#answerQuery(origin, id, body);
    const reply: ReplyMessage = {
      origin: this.nodeId,
      id,
      ...answerRequest(body, this.#operations),
    };
    this.#publish(this.#channels.replies(origin), encodeReply(reply), false);
  }

  /** A query's answer may take a while: the reply goes out when the host's answer settles. */
  #answerQuery(origin: string, id: string, body: QueryBody): void {
    const answer = this.#host?.answerQuery;
    const work =
      answer === undefined
        ? Promise.reject(new Error('this instance answers no cluster queries'))
        : answer.call(this.#host, body.topic, body.payload);
    work
      .then(
        (data) => ({ data: data ?? null }),
        (err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }),
      )
      .then((answer) => {
        let text: string;
        try {
          text = encodeReply({ origin: this.nodeId, id, ...answer });
        } catch (err) {
          // An answer that is not JSON (a cycle, a BigInt): the asker learns why.
          const error = `the answer is not JSON: ${err instanceof Error ? err.message : String(err)}`;
          text = encodeReply({ origin: this.nodeId, id, error });
        }
        this.#publish(this.#channels.replies(origin), text, false);
      });
  }

  #onReply(raw: string): void {
    const decoded = decodeReply(raw);
    if (!decoded.ok) return this.#drop(this.#channels.replies(this.nodeId), decoded.reason);
    this.#requests.reply(decoded.value); // false for a late reply to a request that timed out
  }

  #drop(channel: string, reason: string): void {
    this.#counters.dropped += 1;
    this.#log().warning('RedisAdapter: dropped a message from Redis', {
      channel,
      reason,
      dropped: this.#counters.dropped,
    });
  }

  // ------------------------------------------------------------ internals

  #isLocal(clientId: string): boolean {
    const host = this.#host;
    if (!host) return false;
    return host.hasClient
      ? host.hasClient(clientId)
      : host.namespaces.clientNamespaces.has(clientId);
  }

  #publish(channel: string, message: string | Buffer, isBroadcast = true): void {
    const pub = this.#pub;
    if (pub && pub.isReady) {
      if (isBroadcast) this.#counters.published += 1;
      pub.publish(channel, message).catch(() => this.#link.lose(channel));
    } else if (this.#link.state !== 'closed') {
      this.#link.lose(channel);
    }
  }

  /**
   * The publishing and the subscribing connection: two clients of one Redis, or one
   * cluster link (cluster-connection.ts) that offers the same commands over a Redis Cluster.
   */
  #connections(): [RedisClient, RedisClient] {
    const onError = (err: Error): void => {
      this.#link.failed(err, this.#isUp());
      // Presence too learns of an outage from the errors (a cluster node's connection says
      // it through them), so that its return rewrites this instance's entries.
      this.presence.linkChanged(this.#isUp());
    };
    const sentinel = this.#options.sentinel;
    if (sentinel !== null) {
      const { name: masterName, ...nodes } = sentinel; // nodes, scanInterval, credentials
      const link = new SentinelConnection(
        {
          ...nodes,
          masterName,
          commandTimeout: this.#options.requestTimeout,
          maxReconnectDelay: this.#options.maxReconnectDelay,
          name: `pkg-${this.nodeId}`,
          missed: (channel, since, before) => this.#missed(channel, since, before),
          historyKeys: (channel) => this.#historyKeys(channel),
        },
        onError,
      );
      this.#clusterLink = link;
      // The link implements the commands this package sends (see sentinel-connection.ts).
      const client = link as unknown as RedisClient;
      return [client, client];
    }
    const cluster = this.#options.cluster;
    if (cluster !== null) {
      const link = new ClusterConnection(
        {
          rootNodes: cluster.rootNodes,
          checkInterval: cluster.checkInterval,
          commandTimeout: this.#options.requestTimeout,
          maxReconnectDelay: this.#options.maxReconnectDelay,
          name: `pkg-${this.nodeId}`,
          missed: (channel, since, before) => this.#missed(channel, since, before),
          historyKeys: (channel) => {
            const target = this.#subscriptions?.targetOf(channel);
            if (!this.history || target?.room == null || target.namespace === null) return null;
            return this.#channels.history(target.namespace, target.room);
          },
        },
        onError,
      );
      this.#clusterLink = link;
      // The link implements the commands this package sends (see cluster-connection.ts).
      const client = link as unknown as RedisClient;
      return [client, client];
    }
    const connection = {
      url: this.#options.url,
      maxReconnectDelay: this.#options.maxReconnectDelay,
    };
    return [
      createConnection(
        { ...connection, queueWhileOffline: false, name: `pkg-pub-${this.nodeId}` },
        onError,
      ),
      createConnection(
        { ...connection, queueWhileOffline: true, name: `pkg-sub-${this.nodeId}` },
        onError,
      ),
    ];
  }

  /**
   * What a room's channel missed on a Redis Cluster (a slot migration, a resubscription),
   * read from the room's history: the kept messages after `since` and before `before`.
   */
  async #missed(
    channel: string,
    since: { epoch: string; offset: number },
    before: number,
  ): Promise<Array<string | Uint8Array> | null> {
    const target = this.#subscriptions?.targetOf(channel);
    if (!this.history || target?.room == null || target.namespace === null) return null;
    const read = await this.history.read(target.namespace, target.room, {
      since,
      limit: MAX_FILLED,
      policy: { size: MAX_FILLED, ttl: HISTORY_META_GRACE },
    });
    if (read.reason !== undefined) return null;
    return read.messages.filter((m) => m.offset < before).map((m) => m.text);
  }

  /** The history keys of a room channel (null for other channels, or without history). */
  #historyKeys(channel: string): { meta: string; stream: string } | null {
    const target = this.#subscriptions?.targetOf(channel);
    if (!this.history || target?.room == null || target.namespace === null) return null;
    return this.#channels.history(target.namespace, target.room);
  }

  /** Both connections are ready. */
  #isUp(): boolean {
    return this.#pub?.isReady === true && this.#sub?.isReady === true;
  }

  #log(): LoggerInterface {
    this.#logger ??= new Logger('info', true, false);
    return this.#logger;
  }

  #notAttached(method: string): Error {
    return createRedisError(
      Error,
      'PKG_ERR_REDIS_NOT_ATTACHED',
      `RedisAdapter.${method}: the adapter is not attached; pass it to server.setAdapter() first.`,
    );
  }

  #require(method: string): AdapterHost {
    if (!this.#host) throw this.#notAttached(method);
    return this.#host;
  }
}
