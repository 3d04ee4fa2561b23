/**
 * One connection's live trace: opt-in per connection, off by itself after `duration`, and
 * bounded (the newest `maxMessages` messages, at most `maxBytes` of text, each message cut to
 * `maxMessageChars`).
 *
 * A trace taps only the traced socket: a `message` listener for what the client sends, and
 * the socket's own `send` wrapped for what the server writes to it (an own property that
 * shadows the prototype's, removed when the trace ends). Untraced connections run exactly
 * the code they ran before: tracing costs nothing while it is off.
 */
import { Buffer } from 'node:buffer';
import type { WsClient } from '@pkg/core';
import type { ResolvedTraceOptions } from './options';

/** One traced message or event. */
export interface TraceEntry {
  /** Its number in the trace, from 1: a reader asks for the entries after the last it saw. */
  readonly seq: number;
  readonly at: number;
  /** `in`: from the client; `out`: to the client; `close`: the socket closed. */
  readonly dir: 'in' | 'out' | 'close';
  /** The text (cut to `maxMessageChars`), or `<binary N bytes>`, or the close code and reason. */
  readonly text: string;
  /** Bytes of the whole message. */
  readonly bytes: number;
}

/** What a reader gets: the entries after `since`, and the trace's state. */
export interface TraceSnapshot {
  readonly clientId: string;
  readonly active: boolean;
  readonly startedAt: number;
  /** When it turns itself off (ms since the epoch). */
  readonly until: number;
  /** Entries dropped (oldest first) to stay within the bounds. */
  readonly dropped: number;
  readonly entries: readonly TraceEntry[];
}

type SocketLike = WsClient['socket'];
type Send = SocketLike['send'];

function describe(data: unknown, limit: number): { text: string; bytes: number } {
  if (typeof data === 'string') {
    const bytes = Buffer.byteLength(data);
    return { text: data.length > limit ? `${data.slice(0, limit)}… (cut)` : data, bytes };
  }
  let bytes = 0;
  if (Buffer.isBuffer(data) || data instanceof Uint8Array) bytes = data.byteLength;
  else if (data instanceof ArrayBuffer) bytes = data.byteLength;
  else if (Array.isArray(data)) for (const part of data as Buffer[]) bytes += part.byteLength;
  return { text: `<binary ${bytes} bytes>`, bytes };
}

/** The UTF-8 text of a text frame given as bytes (read in place, not copied). */
function textOf(data: Uint8Array | ArrayBuffer): string {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

class Trace {
  readonly clientId: string;
  readonly startedAt = Date.now();
  readonly until: number;
  active = true;
  dropped = 0;
  #entries: TraceEntry[] = [];
  #chars = 0;
  #seq = 0;
  readonly #o: ResolvedTraceOptions;
  readonly #socket: SocketLike;
  readonly #timer: NodeJS.Timeout;
  readonly #onMessage: (data: unknown, isBinary: boolean) => void;
  readonly #onClose: (code: number, reason: Buffer) => void;

  constructor(client: WsClient, options: ResolvedTraceOptions) {
    this.clientId = client.id;
    this.#o = options;
    this.#socket = client.socket;
    this.until = this.startedAt + options.duration;
    this.#onMessage = (data, isBinary) => {
      const seen = describe(isBinary ? data : String(data), options.maxMessageChars);
      this.add('in', seen.text, seen.bytes);
    };
    this.#onClose = (code, reason) => {
      this.add('close', `${code} ${reason.toString()}`.trim(), 0);
      this.stop();
    };
    const socket = this.#socket;
    const original = socket.send;
    const outbound = (data: unknown, options: unknown): void => this.outbound(data, options);
    const wrapped = function (this: SocketLike, ...args: Parameters<Send>): void {
      // A failure of the trace must never fail the send.
      try {
        outbound(args[0], args[1]);
      } catch {
        /* nothing: the message still goes out */
      }
      return (original as (...a: unknown[]) => void).apply(this, args);
    };
    Object.defineProperty(socket, 'send', { value: wrapped, configurable: true, writable: true });
    // First, so that a message is recorded before the answer its handler sends at once.
    socket.prependListener('message', this.#onMessage);
    socket.once('close', this.#onClose);
    this.#timer = setTimeout(() => this.stop(), options.duration);
    this.#timer.unref?.();
  }

  /**
   * What the server writes: a text frame is shown as text also when it is given as bytes
   * (`{binary: false}`, as the server sends its answers and broadcasts); else as `ws` sends
   * it, bytes as a binary frame.
   */
  outbound(data: unknown, options?: unknown): void {
    const asText =
      (data instanceof Uint8Array || data instanceof ArrayBuffer) &&
      (options as { binary?: unknown } | undefined)?.binary === false;
    const seen = describe(asText ? textOf(data) : data, this.#o.maxMessageChars);
    this.add('out', seen.text, seen.bytes);
  }

  add(dir: TraceEntry['dir'], text: string, bytes: number): void {
    if (!this.active) return;
    this.#seq += 1;
    this.#entries.push({ seq: this.#seq, at: Date.now(), dir, text, bytes });
    this.#chars += text.length;
    while (
      this.#entries.length > this.#o.maxMessages ||
      (this.#chars > this.#o.maxBytes && this.#entries.length > 1)
    ) {
      const old = this.#entries.shift()!;
      this.#chars -= old.text.length;
      this.dropped += 1;
    }
  }

  /** Stops tapping the socket (the entries stay readable until the trace is forgotten). */
  stop(): void {
    if (!this.active) return;
    this.active = false;
    clearTimeout(this.#timer);
    const socket = this.#socket as unknown as Record<string, unknown>;
    if (Object.hasOwn(socket, 'send')) delete socket['send'];
    this.#socket.off('message', this.#onMessage);
    this.#socket.off('close', this.#onClose);
  }

  forget(): void {
    this.stop();
  }

  snapshot(since: number): TraceSnapshot {
    return {
      clientId: this.clientId,
      active: this.active,
      startedAt: this.startedAt,
      until: this.until,
      dropped: this.dropped,
      entries: this.#entries.filter((e) => e.seq > since),
    };
  }
}

/** The traces of this instance's connections. */
export class ConnectionTraces {
  readonly #o: ResolvedTraceOptions;
  readonly #traces = new Map<string, Trace>();

  constructor(options: ResolvedTraceOptions) {
    this.#o = options;
  }

  /** Traces being kept now (active or ended and not yet expired). */
  get size(): number {
    return this.#traces.size;
  }

  /**
   * Starts tracing a local client (restarts an existing trace). `full` when `maxTraced`
   * connections are traced already.
   */
  start(client: WsClient): TraceSnapshot | 'full' {
    this.#prune();
    const existing = this.#traces.get(client.id);
    if (existing !== undefined) {
      existing.forget();
      this.#traces.delete(client.id);
    } else if (this.#activeCount() >= this.#o.maxTraced) {
      return 'full';
    }
    const trace = new Trace(client, this.#o);
    this.#traces.set(client.id, trace);
    return trace.snapshot(0);
  }

  /** Stops a trace; false when there is none for that id. */
  stop(clientId: string): boolean {
    const trace = this.#traces.get(clientId);
    if (trace === undefined) return false;
    trace.forget();
    this.#traces.delete(clientId);
    return true;
  }

  /** The entries after `since`; undefined when the id is not traced here. */
  read(clientId: string, since: number): TraceSnapshot | undefined {
    this.#prune();
    return this.#traces.get(clientId)?.snapshot(since);
  }

  /** Stops every trace (the admin is unmounted, the server closes). */
  close(): void {
    for (const trace of this.#traces.values()) trace.forget();
    this.#traces.clear();
  }

  /** A trace that ended is kept one more `duration` for a last read, then forgotten. */
  #prune(): void {
    const now = Date.now();
    for (const [id, t] of this.#traces) {
      if (!t.active && now > t.until + this.#o.duration) {
        t.forget();
        this.#traces.delete(id);
      }
    }
  }

  #activeCount(): number {
    let n = 0;
    for (const t of this.#traces.values()) if (t.active) n += 1;
    return n;
  }
}
