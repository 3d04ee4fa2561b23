import type { EnvelopeMeta } from '@pkg/wire';

/**
 * Where a broadcast goes. No namespace and no room: every WebSocket client. A namespace: its
 * members. A room: the members of that room in the namespace (`/` when none is given).
 */
export interface BroadcastTarget {
  readonly namespace?: string | null;
  readonly room?: string | null;
  /** Client id(s) to leave out, typically the sender. */
  readonly except?: string | readonly string[];
  /**
   * The W3C trace context of the operation that broadcast (present only with `tracing` on
   * and a span active). A cluster adapter carries it to the other instances and delivers
   * there through the adapter host's `runTraced`, so their deliveries join the trace.
   */
  readonly trace?: EnvelopeMeta;
}
