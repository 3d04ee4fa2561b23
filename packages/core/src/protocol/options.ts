/**
 * What the protocol layer is built from, what it reports, and the closes that end a session.
 */
import type { LoggerInterface } from '@pkg/logger';
import { closeCodes } from '@pkg/wire';
import type { WebSocketHandler } from '@pkg/ws-protocol';
import type { ClientRegistry } from '../ws/client-registry';
import type { ConnectionTable } from './connections';
import type { MessagesOptions } from './messages';
import type { RoomHistory } from '../history/room-history';
import type { HistoryBudgetLimits } from '../history/history-budget';

/**
 * Closes after which a session is not kept: every code of @pkg/wire's close table whose
 * session is not `kept` (docs/protocol.md, "Connection state recovery"). A code the table
 * does not know keeps the session, as a lost connection does.
 */
export const FINAL_CLOSES: ReadonlySet<number> = new Set<number>(
  Object.entries(closeCodes)
    .filter(([, info]) => info.session !== 'kept')
    .map(([code]) => Number(code)),
);

/** What the protocol layer needs, handed over once. */
export interface ProtocolV1Options {
  readonly wsHandler: WebSocketHandler;
  /** The one table of WebSocket clients (the application reads it through `clients`). */
  readonly connections: ConnectionTable;
  readonly clients: ClientRegistry;
  /** What an open connection's messages come to: routes, handler bounds, observation. */
  readonly messages: MessagesOptions;
  readonly logger: LoggerInterface;
  readonly recoveryWindow: number;
  readonly recoveryBuffer: number;
  /** Away sessions in all (0 = no bound). */
  readonly maxAwaySessions: number;
  /** Away sessions per client address (0 = no bound). */
  readonly maxAwaySessionsPerAddress: number;
  /** IPv6 addresses share that bound by their network of this many bits (`ipv6_subnet`). */
  readonly ipv6Subnet: number;
  readonly authTimeout: number;
  /** Time past `expiresAt` an open connection may still send `$refresh` (`auth_refresh_grace`). */
  readonly refreshGrace: number;
  readonly helloWait: number;
  readonly maxPendingRequests: number;
  readonly maxPendingServerRequests: number;
  readonly ackTimeout: number;
  // history
  /** Rooms that keep history: recovery on join, `$history`. */
  readonly history?: RoomHistory;
  /** Every connection's `$history` budget (see history/history-budget.ts). */
  readonly historyBudget?: HistoryBudgetLimits;
  /** Told the outcome of each room recovery (`recovered` or the reason), for the metrics. */
  readonly recoveryOutcome?: (outcome: string) => void;
  /** Longest room or namespace name (`max_room_name_length`), for `$hello.positions` and `$history`. */
  readonly maxNameLength?: number;
  /** Whether a client is a member of a room (for `$history`). */
  readonly isMember?: (clientId: string, room: string, namespace: string) => boolean;
}

/** What the protocol layer holds, for `getLoad()`. */
export interface ProtocolLoad {
  readonly openClients: number;
  readonly sessions: number;
  readonly awaySessions: number;
  readonly sessionBytes: number;
}
