/**
 * One connected client as the handler keeps it: the public WsClient, the raw socket under
 * `ws`, its heartbeat state, and how the server ended the connection (its "intent"), so that
 * onDisconnect can report a meaningful code when no close frame came back.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import type { LoggerInterface } from '@pkg/logger';
import { WsCloseCode } from './close-codes';
import type { FairMember } from './fairness';
import type { HeartbeatMember } from './heartbeat';
import { InboundBudget } from './inbound-budget';
import type { InboundBudgetLimits } from './inbound-budget';

/** A connected client. */
export interface WsClient {
  readonly id: string;
  /** The `ws` connection (send through the handler so that the limits apply). */
  readonly socket: WebSocket;
  readonly ip: string;
  /** Values attached by handshake hooks (and by the application later). */
  readonly data: Record<string, unknown>;
  /** The upgrade request; undefined when the handler runs with `keepRequest: false`. */
  readonly request: IncomingMessage | undefined;
}

interface CloseIntent {
  code: number;
  reason: string;
}

const SETTLED: Promise<void> = Promise.resolve();

/**
 * Kept small on purpose (one per connected client): no closures, no timer until a close is
 * under way, the `closed` promise only once someone waits for it.
 */
export class Connection<Owner = unknown> implements HeartbeatMember, FairMember {
  /** Replaced (same fields, another id) by WebSocketHandler.renameClient. */
  client: WsClient;
  /** The handler that accepted the connection (its shared listeners find it here). */
  readonly owner: Owner;
  heartbeatDue = 0;
  awaitingPong = false;
  turnCount = 0;
  turnEpoch = 0;
  backlog: FairMember['backlog'] = undefined;
  /** True while its raw socket is corked until the end of the Outbound batch. */
  corked = false;
  /** Its inbound budget: messages, bytes, protocol errors, error replies. */
  readonly budget: InboundBudget;
  readonly #rawSocket: Duplex;
  #closed: Promise<void> | undefined;
  #resolveClosed: (() => void) | undefined;
  #intent: CloseIntent | undefined;
  #closeTimer: NodeJS.Timeout | undefined;
  #gone = false;
  #settled = false;

  constructor(client: WsClient, rawSocket: Duplex, owner: Owner, limits: InboundBudgetLimits) {
    this.client = client;
    this.owner = owner;
    this.#rawSocket = rawSocket;
    this.budget = new InboundBudget(limits, Date.now());
  }

  /** Holds its writes until {@link uncork}: several frames leave in one system call. */
  cork(): void {
    this.corked = true;
    this.#rawSocket.cork();
  }

  /** Lets the writes held since {@link cork} go out. */
  uncork(): void {
    this.corked = false;
    this.#rawSocket.uncork();
  }

  /** Resolves after onDisconnect has run. */
  get closed(): Promise<void> {
    if (this.#settled) return SETTLED;
    this.#closed ??= new Promise<void>((resolve) => {
      this.#resolveClosed = resolve;
    });
    return this.#closed;
  }

  /** True once the connection has closed. */
  get gone(): boolean {
    return this.#gone;
  }

  /** True once the server has decided to end the connection. */
  get ending(): boolean {
    return this.#intent !== undefined;
  }

  /** Open, and not being ended by the server. */
  get usable(): boolean {
    return (
      !this.#gone && this.#intent === undefined && this.client.socket.readyState === WebSocket.OPEN
    );
  }

  /** Records why the server ends the connection (the first reason wins). */
  noteIntent(code: number, reason: string): void {
    this.#intent ??= { code, reason };
  }

  /**
   * Starts the close handshake; terminates at once when the close frame cannot be written,
   * and after `timeoutMs` when the handshake does not complete. A later call may shorten
   * the deadline (closeAll after disconnect).
   */
  close(code: number, reason: string, timeoutMs: number, log: LoggerInterface): void {
    if (this.#gone) return;
    this.noteIntent(code, reason);
    const ws = this.client.socket;
    if (ws.readyState === WebSocket.OPEN) {
      if (!this.#rawSocket.writable) {
        ws.terminate();
        return;
      }
      try {
        ws.close(code, reason);
      } catch (err) {
        log.debug('WebSocket close failed; terminating', {
          clientId: this.client.id,
          error: err instanceof Error ? err.message : String(err),
        });
        ws.terminate();
        return;
      }
    }
    if (this.#closeTimer !== undefined) clearTimeout(this.#closeTimer);
    this.#closeTimer = setTimeout(() => {
      if (this.#gone) return;
      log.debug('WebSocket close handshake did not complete; terminating', {
        clientId: this.client.id,
      });
      ws.terminate();
    }, timeoutMs);
  }

  /** Destroys the connection without a close handshake. */
  terminate(code: number, reason: string): void {
    this.noteIntent(code, reason);
    this.client.socket.terminate();
  }

  /**
   * Called on the `ws` close event: stops the timers and gives the code and reason to report
   * (the peer's, or the server's intent when no close frame came back), or undefined if the
   * connection was already settled.
   */
  settle(code: number, reason: string): CloseIntent | undefined {
    if (this.#gone) return undefined;
    this.#gone = true;
    if (this.#closeTimer !== undefined) clearTimeout(this.#closeTimer);
    this.#closeTimer = undefined;
    if (this.#intent && (code === WsCloseCode.NO_STATUS || code === WsCloseCode.ABNORMAL)) {
      return { ...this.#intent };
    }
    return { code, reason };
  }

  /** Lets closeAll() resolve; called after the onDisconnect listeners. */
  resolveClosed(): void {
    this.#settled = true;
    this.#resolveClosed?.();
  }
}
