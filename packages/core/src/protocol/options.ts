/**
 * What the protocol layer is built from, what it reports, and its close codes.
 */
import type { LoggerInterface } from '@pkg/logger';
import type { Envelope, WebSocketHandler, WsClient } from '@pkg/ws-protocol';
import { CLOSE_SESSION_TAKEN_OVER } from './hello';
import type { ClientRegistry } from '../ws/client-registry';

/** Close codes this layer uses (docs/protocol.md, "Close codes of version 1"). */
export const ProtocolCloseCode = {
  POLICY: 1008,
  UNAUTHORIZED: 4401,
  FORBIDDEN: 4403,
  SESSION_TAKEN_OVER: CLOSE_SESSION_TAKEN_OVER,
} as const;

/** Closes after which a session is not kept. */
export const FINAL_CLOSES = new Set([1000, 1001, 1008, 4401, 4403, 4409]);

/** What the protocol layer needs, handed over once. */
export interface ProtocolV1Options {
  readonly wsHandler: WebSocketHandler;
  readonly clients: ClientRegistry;
  readonly logger: LoggerInterface;
  readonly recoveryWindow: number;
  readonly recoveryBuffer: number;
  /** Away sessions in all (0 = no bound). */
  readonly maxAwaySessions: number;
  /** Away sessions per client address (0 = no bound). */
  readonly maxAwaySessionsPerAddress: number;
  readonly authTimeout: number;
  readonly helloWait: number;
  readonly maxPendingRequests: number;
  readonly maxPendingServerRequests: number;
  readonly ackTimeout: number;
  /** Makes the client a member of its namespace and runs its `OnConnect` handlers. */
  readonly start: (clientId: string) => void;
  /** Hands a message to the dispatcher. */
  readonly dispatch: (client: WsClient, envelope: Envelope) => void;
  /** The client is gone for good: out of rooms, `OnDisconnect`, then `done`. */
  readonly end: (clientId: string, done: () => void) => void;
}

/** What the protocol layer holds, for `getLoad()`. */
export interface ProtocolLoad {
  readonly openClients: number;
  readonly sessions: number;
  readonly awaySessions: number;
  readonly sessionBytes: number;
}
