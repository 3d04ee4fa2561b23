/**
 * Presence across instances over Redis (the `PresenceReplicator` of @pkg/core).
 *
 * Each instance owns its entries and keeps them in one hash of its own,
 * `<prefix>:presence:node:<nodeId>` (a field per connection and room, plus `~seq`, the
 * number of its last change), which expires `presence_node_timeout` ms after the instance's
 * last heartbeat. Every change is written there and published on `<prefix>:presence`,
 * numbered; every instance applies the changes of the others to its view. An instance
 * heartbeats every timeout/4 (`PEXPIRE` + a heartbeat message with its last number); one
 * unheard of for timeout/2 is gone: its entries leave every view, so a killed instance's
 * entries are gone everywhere within 3/4 of the timeout. A missed number, a heartbeat ahead
 * of what was applied, or an instance never seen makes the receiver read that instance's
 * hash again (messages that arrive meanwhile are held, then applied on top). While the link
 * to Redis is down, local presence goes on and the view of the others is kept as it was;
 * when it returns, the instance rewrites its own hash and reads every other one.
 */
import type {
  LoggerInterface,
  PresenceRecord,
  PresenceReplicator,
  PresenceReplicatorOptions,
  PresenceSink,
} from '@pkg/core';
import type { RedisClient } from './connection';
import { encodeName } from './wire';
import {
  SEQ_FIELD,
  decodePresence,
  encodePresence,
  entryField,
  entryValue,
  readEntry,
  type PresenceMessage,
  type StoredEntry,
} from './presence-wire';

/** What the replicator needs of the adapter. */
export interface PresenceHost {
  readonly keyPrefix: string;
  readonly nodeId: string;
  /** The publishing connection when it is ready, else null. */
  pub(): RedisClient | null;
  /** Subscribes the listener to a channel (kept across reconnections). */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  log(): LoggerInterface;
}

/** Counters of the replicator, for monitoring and tests. */
export interface RedisPresenceStats {
  /** Other instances whose entries are in this instance's view. */
  readonly nodes: number;
  /** Entries of other instances in the view. */
  readonly remoteEntries: number;
  /** Redis commands sent for presence (writes, heartbeats, reads). */
  readonly commands: number;
  /** Reads of other instances' hashes (after a gap, a new instance, the link's return). */
  readonly syncs: number;
  /** Instances dropped because they stopped heartbeating. */
  readonly expiredNodes: number;
  /** Presence messages dropped as malformed. */
  readonly dropped: number;
  /** Changes not written while the link was down (the rewrite on its return covers them). */
  readonly unsent: number;
  /** Writes Redis refused or that failed on the way. */
  readonly failedWrites: number;
}

/** The least time between two reads of other instances' hashes, ms. */
const MIN_SYNC_INTERVAL = 100;

interface RemoteEntry extends StoredEntry {
  readonly json: string;
}

interface RemoteNode {
  seq: number;
  seen: number;
  readonly entries: Map<string, RemoteEntry>;
}

export class RedisPresence implements PresenceReplicator {
  readonly #h: PresenceHost;
  readonly #key: string;
  readonly #nodePrefix: string;
  readonly #channel: string;
  #sink: PresenceSink | null = null;
  #timeout = 15_000;
  #seq = 0;
  readonly #nodes = new Map<string, RemoteNode>();
  #timer: NodeJS.Timeout | undefined = undefined;
  #up = false;
  /** Messages held while a sync reads hashes; null when none runs. */
  #held: PresenceMessage[] | null = null;
  #wantAll = false;
  readonly #wantNodes = new Set<string>();
  #running = false;
  /** When the last read of hashes started (Date.now()). */
  #lastSync = 0;
  #counters = {
    commands: 0,
    syncs: 0,
    expiredNodes: 0,
    dropped: 0,
    unsent: 0,
    failedWrites: 0,
  };

  constructor(host: PresenceHost) {
    this.#h = host;
    this.#nodePrefix = `${host.keyPrefix}:presence:node:`;
    this.#key = this.#nodePrefix + encodeName(host.nodeId);
    this.#channel = `${host.keyPrefix}:presence`;
  }

  stats(): RedisPresenceStats {
    let remoteEntries = 0;
    for (const node of this.#nodes.values()) remoteEntries += node.entries.size;
    return { nodes: this.#nodes.size, remoteEntries, ...this.#counters };
  }

  start(sink: PresenceSink, options: PresenceReplicatorOptions): void {
    if (this.#sink !== null) return;
    this.#sink = sink;
    this.#timeout = options.nodeTimeout;
    this.#h.subscribe(this.#channel, this.#onMessage).catch((err: unknown) => {
      this.#h.log().warning('RedisAdapter: presence channel subscription failed', {
        error: err instanceof Error ? err.message : String(err),
      });
    });
    this.#timer = setInterval(this.#tick, Math.max(1, Math.floor(this.#timeout / 4)));
    this.#timer.unref?.();
    if (this.#up) this.#request(true);
  }

  /** The adapter's link changed; its return rewrites this instance's hash and reads the others. */
  linkChanged(up: boolean): void {
    const was = this.#up;
    this.#up = up;
    if (up && !was && this.#sink !== null) this.#request(true);
  }

  joined(record: PresenceRecord): void {
    this.#seq += 1;
    const pub = this.#h.pub();
    if (pub === null) {
      this.#counters.unsent += 1; // written again when the link returns
      return;
    }
    const { namespace: ns, room: r, key: k, meta: m } = record;
    this.#counters.commands += 2;
    const field = entryField(ns, r, m.clientId);
    pub
      .hSet(this.#key, { [field]: entryValue(k, m), [SEQ_FIELD]: String(this.#seq) })
      .catch(this.#lost);
    const message = encodePresence({ t: 'j', o: this.#h.nodeId, s: this.#seq, ns, r, k, m });
    pub.publish(this.#channel, message).catch(this.#lost);
  }

  left(namespace: string, room: string, clientId: string): void {
    this.#seq += 1;
    const pub = this.#h.pub();
    if (pub === null) {
      this.#counters.unsent += 1;
      return;
    }
    this.#counters.commands += 3;
    // Field first, number second (one connection keeps the order): a hash read between the
    // two shows the entry gone under the older number, and the leave is applied again, harmlessly.
    pub.hDel(this.#key, entryField(namespace, room, clientId)).catch(this.#lost);
    pub.hSet(this.#key, SEQ_FIELD, String(this.#seq)).catch(this.#lost);
    const message = encodePresence({
      t: 'l',
      o: this.#h.nodeId,
      s: this.#seq,
      ns: namespace,
      r: room,
      c: clientId,
    });
    pub.publish(this.#channel, message).catch(this.#lost);
  }

  /** Stops heartbeating; removes this instance's hash and says goodbye (best effort). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const pub = this.#h.pub();
    const sink = this.#sink;
    this.#sink = null; // also while the link is down: nothing runs for a closed replicator
    if (pub === null || sink === null) return;
    const bye = encodePresence({ t: 'b', o: this.#h.nodeId, s: this.#seq });
    await Promise.all([pub.del(this.#key), pub.publish(this.#channel, bye)]).catch(() => undefined);
  }

  // ------------------------------------------------------------ receiving

  /**
   * A write that failed (the link went down, or Redis refused it under load): this
   * instance's hash may now lack an entry that its number says is there, so it is written
   * anew under a new number (the others then read it again), now or when the link returns.
   */
  readonly #lost = (): void => {
    this.#counters.failedWrites += 1;
    if (this.#sink !== null) this.#request(true);
  };

  readonly #onMessage = (raw: string): void => {
    const decoded = decodePresence(raw);
    if (!decoded.ok) {
      this.#counters.dropped += 1;
      this.#h.log().warning('RedisAdapter: dropped a presence message', {
        reason: decoded.reason,
      });
      return;
    }
    const message = decoded.value;
    if (message.o === this.#h.nodeId || this.#sink === null) return;
    const node = this.#nodes.get(message.o);
    if (node !== undefined) node.seen = Date.now();
    if (this.#held !== null) this.#held.push(message);
    else this.#apply(message);
  };

  #apply(message: PresenceMessage): void {
    const node = this.#nodes.get(message.o);
    if (node === undefined) {
      if (message.t === 'b') return;
      this.#request(false, message.o);
      this.#held?.push(message);
      return;
    }
    node.seen = Date.now();
    if (message.t === 'b') return this.#dropNode(message.o);
    if (message.t === 'h') {
      if (message.s > node.seq) this.#request(false, message.o);
      return;
    }
    if (message.s <= node.seq) return; // already in what was read
    if (message.s !== node.seq + 1) {
      this.#request(false, message.o);
      this.#held?.push(message);
      return;
    }
    node.seq = message.s;
    const sink = this.#sink!;
    if (message.t === 'j') {
      const field = entryField(message.ns, message.r, message.m.clientId);
      const entry = {
        namespace: message.ns,
        room: message.r,
        clientId: message.m.clientId,
        key: message.k,
        meta: message.m,
        json: entryValue(message.k, message.m),
      };
      node.entries.set(field, entry);
      sink.join(entry);
    } else {
      node.entries.delete(entryField(message.ns, message.r, message.c));
      sink.leave(message.ns, message.r, message.c);
    }
  }

  #dropNode(nodeId: string): void {
    const node = this.#nodes.get(nodeId);
    if (node === undefined) return;
    this.#nodes.delete(nodeId);
    for (const e of node.entries.values()) this.#sink?.leave(e.namespace, e.room, e.clientId);
  }

  // ------------------------------------------------------------ heartbeat

  readonly #tick = (): void => {
    const pub = this.#h.pub();
    if (pub === null || !this.#up || this.#sink === null) return; // frozen while the link is down
    this.#counters.commands += 2;
    pub
      .pExpire(this.#key, this.#timeout)
      .then((set) => {
        // The hash is gone although this instance is alive: Redis lost it (restarted
        // without its data, a failover that lost the last writes). Written anew.
        if (Number(set) === 0 && this.#sink !== null) this.#request(true);
      })
      .catch(this.#lost);
    const beat = encodePresence({ t: 'h', o: this.#h.nodeId, s: this.#seq });
    pub.publish(this.#channel, beat).catch(this.#lost);
    const silent = Date.now() - this.#timeout / 2;
    for (const [nodeId, node] of this.#nodes) {
      if (node.seen >= silent) continue;
      this.#counters.expiredNodes += 1;
      this.#h.log().info('RedisAdapter: an instance stopped heartbeating; its presence left', {
        nodeId,
        entries: node.entries.size,
      });
      this.#dropNode(nodeId);
    }
  };

  // ------------------------------------------------------------ reading hashes

  /** Asks for a read of every hash (`all`) or of one instance's; held messages wait for it. */
  #request(all: boolean, nodeId?: string): void {
    if (all) this.#wantAll = true;
    if (nodeId !== undefined) this.#wantNodes.add(nodeId);
    this.#held ??= [];
    if (this.#running) return;
    this.#running = true;
    void this.#run();
  }

  /** Reads what was asked for, then applies the held messages; again while more is asked. */
  async #run(): Promise<void> {
    try {
      for (;;) {
        if (this.#h.pub() === null) {
          // The link is down: its return asks for a full read, which covers all of this.
          this.#wantAll = false;
          this.#wantNodes.clear();
          this.#held = null;
          return;
        }
        while (this.#wantAll || this.#wantNodes.size > 0) {
          // Reads follow each other at most every MIN_SYNC_INTERVAL ms: an instance whose
          // hash is missing (Redis lost it) keeps sending messages that ask for a read of
          // it until it writes its hash again, and reading it again at once would spin.
          const wait = this.#lastSync + MIN_SYNC_INTERVAL - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait).unref?.());
          if (this.#sink === null) return;
          this.#lastSync = Date.now();
          const all = this.#wantAll;
          const nodes = [...this.#wantNodes];
          this.#wantAll = false;
          this.#wantNodes.clear();
          try {
            await this.#sync(all, nodes);
          } catch (err) {
            this.#h.log().debug('RedisAdapter: presence read failed', {
              error: err instanceof Error ? err.message : String(err),
            });
          }
        }
        // Held messages a hash already holds are skipped by their number; a gap asks again.
        const held = this.#held ?? [];
        this.#held = null;
        for (const message of held) {
          if (this.#held !== null) (this.#held as PresenceMessage[]).push(message);
          else this.#apply(message);
        }
        if (!this.#wantAll && this.#wantNodes.size === 0) return;
        // Once round again: never without letting the rest of the process run first.
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.#running = false;
    }
  }

  async #sync(all: boolean, nodeIds: readonly string[]): Promise<void> {
    const pub = this.#h.pub();
    if (pub === null || this.#sink === null) return;
    this.#counters.syncs += 1;
    if (all) await this.#rewriteOwn(pub);
    const keys = new Set(nodeIds.map((id) => this.#nodePrefix + encodeName(id)));
    if (all) {
      for await (const batch of pub.scanIterator({ MATCH: `${this.#nodePrefix}*`, COUNT: 100 })) {
        this.#counters.commands += 1;
        for (const key of batch as unknown as string[]) keys.add(String(key));
      }
    }
    keys.delete(this.#key);
    const read = await Promise.all(
      [...keys].map(async (key) => {
        this.#counters.commands += 2;
        const [hash, ttl] = await Promise.all([pub.hGetAll(key), pub.pTTL(key)]);
        return { key, hash: hash as Record<string, string>, ttl: Number(ttl) };
      }),
    );
    const seen = new Set<string>();
    for (const { key, hash, ttl } of read) {
      let nodeId: string;
      try {
        nodeId = decodeURIComponent(key.slice(this.#nodePrefix.length));
      } catch {
        continue;
      }
      seen.add(nodeId);
      this.#replace(nodeId, hash, ttl);
    }
    if (all) {
      for (const nodeId of [...this.#nodes.keys()]) if (!seen.has(nodeId)) this.#dropNode(nodeId);
    }
  }

  /** Writes this instance's hash anew: every local entry, the current number, the expiry. */
  async #rewriteOwn(pub: RedisClient): Promise<void> {
    // A new number: every other instance sees a heartbeat ahead of what it has and reads
    // this hash again.
    this.#seq += 1;
    const fields: Record<string, string> = { [SEQ_FIELD]: String(this.#seq) };
    for (const r of this.#sink!.local()) {
      fields[entryField(r.namespace, r.room, r.meta.clientId)] = entryValue(r.key, r.meta);
    }
    this.#counters.commands += 5;
    await pub
      .multi()
      .del(this.#key)
      .hSet(this.#key, fields)
      .pExpire(this.#key, this.#timeout)
      .exec();
    const beat = encodePresence({ t: 'h', o: this.#h.nodeId, s: this.#seq });
    await pub.publish(this.#channel, beat);
  }

  /** Replaces what is known of an instance by its hash as just read. */
  #replace(nodeId: string, hash: Record<string, string>, ttl: number): void {
    const seqText = hash[SEQ_FIELD];
    if (seqText === undefined || ttl === -2) return this.#dropNode(nodeId);
    const sink = this.#sink!;
    const old = this.#nodes.get(nodeId);
    const entries = new Map<string, RemoteEntry>();
    for (const [field, value] of Object.entries(hash)) {
      if (field === SEQ_FIELD) continue;
      const entry = readEntry(field, value);
      if (entry === null) continue;
      entries.set(field, { ...entry, json: value });
    }
    // Heard of `timeout - ttl` ms ago (a hash without expiry: now).
    const seen = Date.now() - (ttl > 0 ? Math.max(0, this.#timeout - ttl) : 0);
    this.#nodes.set(nodeId, {
      seq: Number(seqText),
      seen: Math.max(seen, old?.seen ?? 0),
      entries,
    });
    if (old !== undefined) {
      for (const [field, e] of old.entries) {
        if (!entries.has(field)) sink.leave(e.namespace, e.room, e.clientId);
      }
    }
    for (const [field, e] of entries) {
      if (old?.entries.get(field)?.json !== e.json) sink.join(e);
    }
  }
}
