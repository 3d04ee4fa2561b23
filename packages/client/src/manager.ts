/**
 * Reconnection management: opens each connection attempt, decides after every close
 * whether to try again (by the close-code table of @pkg/wire), waits with exponential
 * backoff and full jitter, and watches the browser's online / offline events. The backoff
 * returns to its first step only once a connection has stayed up for `stableAfter` ms, so a
 * server that closes every connection at once sees growing delays, never a tight loop.
 * What travels on an open connection is the protocol socket's (socket.ts).
 */
import {
  CloseCode,
  SUBPROTOCOL,
  reconnectsAfter,
  reconnectsAfterRefusal,
  restartDelay,
} from '@pkg/wire';
import { backoffDelay } from './backoff';
import { ClientError } from './errors';
import type { LifecycleEventName, LifecycleEvents, StopCause } from './events';
import type { ResolvedClientOptions } from './options';
import { attemptFailure, credentialRefusal, goAway } from './refusal';
import { CLOSE_LOST, type ProtocolSocket } from './socket';
import { Connection, resolveWebSocket, type UpgradeRefusal } from './transport';
import { buildUrl } from './url';

/** Where the client is: not connecting, opening a connection, connected, or waiting to retry. */
export type ClientStatus = 'idle' | 'connecting' | 'connected' | 'waiting';

type Emit = <E extends LifecycleEventName>(
  event: E,
  payload: Parameters<LifecycleEvents[E]>[0],
) => void;

async function resolveSource<T>(
  source: T | (() => T | Promise<T>) | undefined,
): Promise<T | undefined> {
  return typeof source === 'function' ? await (source as () => T | Promise<T>)() : source;
}

export class Manager {
  readonly #url: string;
  readonly #options: ResolvedClientOptions;
  readonly #emit: Emit;
  #socket!: ProtocolSocket;
  #connection: Connection | null = null;
  #status: ClientStatus = 'idle';
  /** Attempts since the last connection that stayed up `stableAfter` ms. */
  #attempt = 0;
  #reconnecting = false;
  #offline = false;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #stableTimer: ReturnType<typeof setTimeout> | undefined;
  #waiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  #generation = 0;
  /**
   * Offer the subprotocol `pkg.v1`; false after a server selected none and `ws` refused the
   * handshake for it, until the next connect() from idle.
   */
  #offerV1 = true;
  readonly #onOnline = (): void => this.#networkChanged(true);
  readonly #onOffline = (): void => this.#networkChanged(false);

  constructor(url: string, options: ResolvedClientOptions, emit: Emit) {
    this.#url = url;
    this.#options = options;
    this.#emit = emit;
  }

  /** The socket whose messages this manager's connections carry (set once, after both exist). */
  attach(socket: ProtocolSocket): void {
    this.#socket = socket;
  }

  get status(): ClientStatus {
    return this.#status;
  }

  get connection(): Connection | null {
    return this.#connection;
  }

  /** Connects (and keeps reconnecting); resolves once connected. */
  connect(): Promise<void> {
    if (this.#status === 'connected') return Promise.resolve();
    const waiting = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (this.#status === 'idle') {
      this.#attempt = 0;
      this.#offerV1 = true;
      this.#reconnecting = false;
      this.#watchNetwork(true);
      void this.#open();
    }
    return waiting;
  }

  /** Closes with 1000 and stops; true when a connection was established. */
  disconnect(): boolean {
    const wasConnected = this.#status === 'connected';
    this.#generation += 1;
    this.#status = 'idle';
    this.#watchNetwork(false);
    this.#clearTimers();
    const connection = this.#connection;
    this.#connection = null;
    connection?.close(CloseCode.NORMAL, 'client disconnect');
    return wasConnected;
  }

  /** Called by the socket once `$welcome` (or version 0) settles the connection. */
  established(): { reconnected: boolean; attempt: number } {
    this.#status = 'connected';
    const reconnected = this.#reconnecting;
    const attempt = this.#attempt;
    this.#reconnecting = false;
    const stableAfter = this.#options.stableAfter;
    if (stableAfter === 0) this.#attempt = 0;
    else {
      this.#stableTimer = setTimeout(() => {
        this.#stableTimer = undefined;
        this.#attempt = 0;
      }, stableAfter);
    }
    return { reconnected, attempt };
  }

  settle(error: Error | undefined): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) {
      if (error) w.reject(error);
      else w.resolve();
    }
  }

  async #open(): Promise<void> {
    const generation = ++this.#generation;
    this.#status = 'connecting';
    let url: string;
    let auth: string | undefined;
    let Ctor;
    try {
      Ctor = await resolveWebSocket(this.#options.WebSocket);
      url = buildUrl(this.#url, (await resolveSource(this.#options.query)) ?? {});
      auth = await resolveSource(this.#options.auth);
    } catch (err) {
      if (generation !== this.#generation) return;
      const error =
        err instanceof ClientError
          ? err
          : new ClientError(
              'PKG_ERR_CLIENT_CONNECTION_FAILED',
              `Could not prepare the connection: ${err instanceof Error ? err.message : String(err)}`,
            );
      this.#fail(error);
      return;
    }
    if (generation !== this.#generation) return;
    const offerV1 = this.#options.protocol !== 'basic' && this.#offerV1;
    const connection: Connection = new Connection(Ctor, url, offerV1 ? [SUBPROTOCOL] : [], {
      open: () => {
        if (generation === this.#generation) {
          this.#socket.opened(connection.protocol, this.#options.protocol !== 'basic', auth);
        }
      },
      message: (text) => {
        if (generation === this.#generation) this.#socket.message(text);
      },
      binary: (bytes) => {
        if (generation === this.#generation) this.#socket.binaryMessage(bytes);
      },
      close: (code, reason, refusal) => {
        if (generation === this.#generation && connection.noSubprotocol && this.#offerV1) {
          // `ws` refuses a handshake in which the server selected none of the offered
          // subprotocols (browsers accept it): that server speaks version 0, so connect
          // again at once without offering pkg.v1.
          this.#offerV1 = false;
          this.#connection = null;
          void this.#open();
          return;
        }
        this.#onClose(generation, code, reason, refusal);
      },
    });
    this.#connection = connection;
  }

  #onClose(
    generation: number,
    code: number,
    reason: string,
    refusal: UpgradeRefusal | undefined,
  ): void {
    if (generation !== this.#generation) return;
    const wasConnected = this.#status === 'connected';
    this.#connection = null;
    this.#clearTimers();
    const { authRefusal, closeError } = this.#socket.closed(code);
    const credentials = credentialRefusal(code, reason, refusal, authRefusal);
    const stop = credentials ?? (reconnectsAfter(code) ? undefined : goAway(code, reason));
    const willReconnect = stop === undefined && this.#options.reconnection;
    const cause = stop === undefined ? undefined : stopCause(code, stop);
    if (wasConnected) {
      this.#emit('disconnect', { code, reason, willReconnect, ...(cause ? { cause } : {}) });
    }
    if (stop) {
      // The server sent this client away: the same client would be sent away again, or
      // another connection holds its session now. Its session is over either way.
      if (cause !== 'unauthorized' && cause !== 'forbidden') this.#socket.forgetSession();
      this.#stop(stop, code, reason, cause!, credentials !== undefined || !wasConnected);
      return;
    }
    if (!wasConnected)
      this.#emit('connect_error', closeError ?? attemptFailure(code, reason, refusal));
    if (!this.#options.reconnection) {
      this.#status = 'idle';
      this.#watchNetwork(false);
      this.settle(
        new ClientError(
          'PKG_ERR_CLIENT_CONNECTION_FAILED',
          `The connection closed (code ${code}) and reconnection is off.`,
          { closeCode: code, reason },
        ),
      );
      return;
    }
    // A refused upgrade's Retry-After (503 while draining or at a cap) is a hint like 1012's.
    const retryAfter =
      refusal === undefined
        ? undefined
        : reconnectsAfterRefusal(refusal.status, refusal.retryAfter).delayMs;
    this.#scheduleRetry(restartDelay(code, reason) ?? retryAfter);
  }

  /** Stops reconnecting because of what the server said; reports why. */
  #stop(error: ClientError, code: number, reason: string, cause: StopCause, report: boolean): void {
    this.#status = 'idle';
    this.#reconnecting = false;
    this.#watchNetwork(false);
    this.#clearTimers();
    if (report) this.#emit('connect_error', error);
    this.#emit('reconnect_stopped', { code, reason, cause, error });
    this.settle(error);
  }

  /** Gives up before a connection could be tried: reports the error, rejects connect(). */
  #fail(error: ClientError): void {
    this.#status = 'idle';
    this.#reconnecting = false;
    this.#watchNetwork(false);
    this.#clearTimers();
    this.#emit('connect_error', error);
    this.settle(error);
  }

  /**
   * Waits, then opens the next attempt: the backoff's delay, or after a 1012 (service
   * restart) or an upgrade refused with `Retry-After` the server's hint plus a jitter of up
   * to `reconnectionDelay`, so that the clients of a restarted instance arrive spread over
   * its window.
   */
  #scheduleRetry(hint?: number): void {
    this.#status = 'waiting';
    this.#reconnecting = true;
    if (this.#offline) return; // `online` starts the next attempt
    const attempt = this.#attempt + 1;
    if (attempt > this.#options.reconnectionAttempts) {
      const attempts = this.#attempt;
      this.#status = 'idle';
      this.#reconnecting = false;
      this.#watchNetwork(false);
      this.#emit('reconnect_failed', { attempts });
      this.settle(
        new ClientError(
          'PKG_ERR_CLIENT_CONNECTION_FAILED',
          `Gave up after ${attempts} reconnection attempts (reconnectionAttempts).`,
        ),
      );
      return;
    }
    this.#attempt = attempt;
    const o = this.#options;
    const delay =
      hint === undefined
        ? backoffDelay(attempt, o.reconnectionDelay, o.reconnectionDelayMax, o.random)
        : hint + Math.floor(o.random() * o.reconnectionDelay);
    this.#emit('reconnecting', { attempt, delay });
    const generation = this.#generation;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (generation === this.#generation && this.#status === 'waiting') void this.#open();
    }, delay);
  }

  #clearTimers(): void {
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#stableTimer);
    this.#retryTimer = this.#stableTimer = undefined;
    this.#socket.stopTimers();
  }

  #watchNetwork(on: boolean): void {
    const network = this.#options.network;
    if (!network) return;
    network.removeEventListener('online', this.#onOnline);
    network.removeEventListener('offline', this.#onOffline);
    if (on) {
      network.addEventListener('online', this.#onOnline);
      network.addEventListener('offline', this.#onOffline);
    } else this.#offline = false;
  }

  /** Offline: drop the (probably dead) connection and wait. Online: retry at once. */
  #networkChanged(online: boolean): void {
    if (!online) {
      this.#offline = true;
      clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
      if (this.#connection) this.#connection.close(CLOSE_LOST, 'network offline');
      return;
    }
    if (!this.#offline) return;
    this.#offline = false;
    if (this.#status === 'waiting') {
      this.#attempt = 0;
      void this.#open();
    }
  }
}

/** The cause a stop reports: from the close code, or from a refused upgrade's status. */
function stopCause(code: number, error: ClientError): StopCause {
  switch (code) {
    case CloseCode.NORMAL:
      return 'server_disconnect';
    case CloseCode.POLICY_VIOLATION:
      return 'policy_violation';
    case CloseCode.SESSION_TAKEN_OVER:
      return 'session_taken_over';
    default:
      return error.code === 'PKG_ERR_CLIENT_FORBIDDEN' ? 'forbidden' : 'unauthorized';
  }
}
