import type { Channels, WireTarget } from './wire';

/** What {@link Subscriptions} needs from the subscribing connection. */
export interface SubscribingLink {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
}

/**
 * The namespace and room channels an instance listens to: one per namespace or room with at
 * least one local member, subscribed when the first member arrives and unsubscribed when the
 * last one leaves, so an instance receives nothing for rooms it has nobody in.
 */
export class Subscriptions {
  /** channel -> the target its messages are for. */
  readonly #targets = new Map<string, WireTarget>();
  /** Settles once every subscribe/unsubscribe issued so far has been answered. */
  #work: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly channels: Channels,
    private readonly link: SubscribingLink,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Channels held now. */
  get size(): number {
    return this.#targets.size;
  }

  /** The target of a namespace/room channel held now, else undefined. */
  targetOf(channel: string): WireTarget | undefined {
    return this.#targets.get(channel);
  }

  /** Brings one namespace (`room` null) or room channel in line with its local member count. */
  update(namespace: string, room: string | null, localMembers: number): void {
    const channel =
      room === null ? this.channels.namespace(namespace) : this.channels.room(namespace, room);
    const held = this.#targets.has(channel);
    if (localMembers > 0 && !held) {
      this.#targets.set(channel, { namespace, room });
      this.#track(this.link.subscribe(channel));
    } else if (localMembers === 0 && held) {
      this.#targets.delete(channel);
      this.#track(this.link.unsubscribe(channel));
    }
  }

  /** Resolves once every change made so far (and during the wait) has been answered. */
  async synced(): Promise<void> {
    let work: Promise<unknown>;
    do {
      work = this.#work;
      await work;
    } while (work !== this.#work);
  }

  /** Forgets every channel (the connection is being closed). */
  clear(): void {
    this.#targets.clear();
  }

  #track(work: Promise<unknown>): void {
    const settled = work.catch((err: unknown) => this.onError(err));
    this.#work = Promise.all([this.#work, settled]);
  }
}
