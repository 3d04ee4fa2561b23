import type { Channels, WireTarget } from './wire';

/** What {@link Subscriptions} needs from the subscribing connection. */
export interface SubscribingLink {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
}

/**
 * The namespace and room channels an instance listens to: one per namespace or room with at
 * least one local member, subscribed when the first member arrives. When the last one
 * leaves, the channel stays subscribed for `grace` ms (the adapter's `unsubscribeGrace`)
 * and is unsubscribed only if nobody came back meanwhile, so a client that hops between
 * rooms, or leaves and rejoins, costs no SUBSCRIBE/UNSUBSCRIBE pair per hop. An instance
 * receives nothing for rooms it has had nobody in for longer than the grace.
 */
export class Subscriptions {
  /** channel -> the target its messages are for (lingering channels included). */
  readonly #targets = new Map<string, WireTarget>();
  /** Channels without local members, waiting out the grace before UNSUBSCRIBE. */
  readonly #lingering = new Map<string, NodeJS.Timeout>();
  /** Channels whose SUBSCRIBE Redis has confirmed (and not unsubscribed since). */
  readonly #confirmed = new Set<string>();
  /** Settles once every subscribe/unsubscribe issued so far has been answered. */
  #work: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly channels: Channels,
    private readonly link: SubscribingLink,
    private readonly onError: (err: unknown) => void,
    private readonly grace = 0,
  ) {}

  /** Channels held now (subscribed, or lingering before their UNSUBSCRIBE). */
  get size(): number {
    return this.#targets.size;
  }

  /** Channels held only because their grace has not run out. */
  get lingering(): number {
    return this.#lingering.size;
  }

  /** The target of a namespace/room channel held now, else undefined. */
  targetOf(channel: string): WireTarget | undefined {
    return this.#targets.get(channel);
  }

  /** Whether a message published on the channel now comes back here: its SUBSCRIBE was confirmed. */
  confirmed(channel: string): boolean {
    return this.#confirmed.has(channel);
  }

  /** The channel of a namespace (`room` null) or room. */
  channelOf(namespace: string, room: string | null): string {
    return room === null ? this.channels.namespace(namespace) : this.channels.room(namespace, room);
  }

  /** Whether a member joining there would cost no SUBSCRIBE (held, or lingering). */
  holds(namespace: string, room: string | null): boolean {
    return this.#targets.has(this.channelOf(namespace, room));
  }

  /** Brings one namespace (`room` null) or room channel in line with its local member count. */
  update(namespace: string, room: string | null, localMembers: number): void {
    const channel = this.channelOf(namespace, room);
    const held = this.#targets.has(channel);
    if (localMembers > 0) {
      const timer = this.#lingering.get(channel);
      if (timer !== undefined) {
        clearTimeout(timer);
        this.#lingering.delete(channel);
      } else if (!held) {
        this.#targets.set(channel, { namespace, room });
        this.#track(
          this.link.subscribe(channel).then(() => {
            if (this.#targets.has(channel)) this.#confirmed.add(channel);
          }),
        );
      }
      return;
    }
    if (!held || this.#lingering.has(channel)) return;
    if (this.grace === 0) {
      this.#unsubscribe(channel);
      return;
    }
    const timer = setTimeout(() => {
      this.#lingering.delete(channel);
      this.#unsubscribe(channel);
    }, this.grace);
    timer.unref();
    this.#lingering.set(channel, timer);
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
    for (const timer of this.#lingering.values()) clearTimeout(timer);
    this.#lingering.clear();
    this.#targets.clear();
    this.#confirmed.clear();
  }

  #unsubscribe(channel: string): void {
    this.#targets.delete(channel);
    this.#confirmed.delete(channel);
    this.#track(this.link.unsubscribe(channel));
  }

  #track(work: Promise<unknown>): void {
    const settled = work.catch((err: unknown) => this.onError(err));
    this.#work = Promise.all([this.#work, settled]);
  }
}
