import { Channels } from './wire';

/**
 * Channel names on a Redis Cluster. A room's channel carries the hash tag of the room's
 * history keys (`{<namespace>:<room>}`, taken from {@link Channels.history} so the two never
 * drift apart), so the channel, the stream and the room's hash live in one slot: the
 * history script can SPUBLISH on the channel, and a room lives on one shard. The other
 * channels (all, requests, replies, namespaces, presence) are sharded channels without a
 * tag, each on the shard its own name hashes to.
 */
export class ClusterChannels extends Channels {
  readonly #prefix: string;

  constructor(prefix: string) {
    super(prefix);
    this.#prefix = prefix;
  }

  override room(namespace: string, room: string): string {
    const key = this.history(namespace, room).meta;
    const open = key.indexOf('{');
    const close = key.indexOf('}', open + 1);
    // history() always tags its keys; the fallback keeps a channel in any case.
    const tag = open >= 0 && close > open ? key.slice(open, close + 1) : `{${key}}`;
    return `${this.#prefix}:room:${tag}`;
  }
}
