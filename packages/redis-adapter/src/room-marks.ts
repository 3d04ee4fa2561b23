/**
 * What a link (cluster-connection.ts, sentinel-connection.ts) knows each room reached: the
 * position of the last message it published there (from the publish script's reply) and of
 * the last kept message its subscription received (the room's sequence, cluster-gaps.ts).
 * Every history script carries both as its trailing arguments (cluster-scripts.ts), so that
 * a master that took over without the last writes does not hand their offsets out again.
 */
import type { RoomSequence } from './cluster-gaps';

/** Rooms whose last published position is remembered (the oldest forgotten first). */
const MAX_ISSUED = 100_000;

/** The hash tag of a key or channel (`{…}`, the room's), or null. */
export function tagOf(name: string): string | null {
  const open = name.indexOf('{');
  const close = name.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? name.slice(open, close + 1) : null;
}

export class RoomMarks {
  readonly #sequence: RoomSequence;
  /** Room tag -> the position of the last message this link published there. */
  readonly #issued = new Map<string, { epoch: string; offset: number }>();
  /** Room tag -> its channel, for the channels this link is subscribed to. */
  readonly #channels = new Map<string, string>();

  constructor(sequence: RoomSequence) {
    this.#sequence = sequence;
  }

  /** The link subscribes `channel`: a room channel's received positions count from now. */
  subscribed(channel: string): void {
    const tag = tagOf(channel);
    if (tag !== null) this.#channels.set(tag, channel);
  }

  /** The link left `channel`. */
  unsubscribed(channel: string): void {
    this.#sequence.forget(channel);
    const tag = tagOf(channel);
    if (tag !== null && this.#channels.get(tag) === channel) this.#channels.delete(tag);
  }

  /** The reply of a publish script for the room of `tag`: `[offset, epoch, …]`. */
  published(tag: string | null, reply: unknown): void {
    if (tag === null || !Array.isArray(reply)) return;
    const [offset, epoch] = reply as unknown[];
    if (typeof epoch !== 'string' || typeof offset !== 'number') return;
    this.#issued.delete(tag);
    if (this.#issued.size >= MAX_ISSUED) {
      const oldest = this.#issued.keys().next().value;
      if (oldest !== undefined) this.#issued.delete(oldest);
    }
    this.#issued.set(tag, { epoch, offset });
  }

  /** `<epoch>, <offset>` of the last message published in the room and of the last one received ('' and 0 when none). */
  known(tag: string | null): string[] {
    const channel = tag === null ? undefined : this.#channels.get(tag);
    const known: string[] = [];
    for (const p of [
      tag === null ? undefined : this.#issued.get(tag),
      channel === undefined ? undefined : this.#sequence.position(channel),
    ]) {
      known.push(p?.epoch ?? '', String(p?.offset ?? 0));
    }
    return known;
  }
}
