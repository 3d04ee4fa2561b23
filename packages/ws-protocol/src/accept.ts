/**
 * Accepting a connection once `ws` completed the upgrade: the client record, the listeners
 * every connection shares (the same five functions for all: no closures per client), and
 * the end of a connection (onDisconnect exactly once).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import type { LoggerInterface } from '@pkg/logger';
import { Connection } from './connection';
import type { WsClient } from './connection';
import { connectionError } from './connection-events';
import type { ClientTable } from './client-table';
import type { FairScheduler } from './fairness';
import type { HeartbeatSweep } from './heartbeat';
import type { ResolvedWebSocketHandlerOptions } from './options';
import type { Outbound } from './outbound';

/** Called once per client after its handshake, with the upgrade request (kept or not). */
export type WsConnectListener = (client: WsClient, request: IncomingMessage) => void;
export type WsDisconnectListener = (client: WsClient, code: number, reason: string) => void;

/** The parts of a WebSocketHandler its connections reach through `conn.owner`. */
export interface ConnectionOwner {
  readonly options: ResolvedWebSocketHandlerOptions;
  readonly log: LoggerInterface;
  readonly table: ClientTable;
  readonly outbound: Outbound;
  readonly fair: FairScheduler<Connection<ConnectionOwner>>;
  readonly heartbeat: HeartbeatSweep<Connection<ConnectionOwner>>;
  readonly connectListeners: readonly WsConnectListener[];
  readonly disconnectListeners: readonly WsDisconnectListener[];
}

/** A connection as the handler keeps it. */
export type OwnedConnection = Connection<ConnectionOwner>;

/** Where a `ws` socket keeps its Connection, for the listeners shared by every connection. */
const kConnection = Symbol('connection');
type TaggedSocket = WebSocket & { [kConnection]?: OwnedConnection };

export function connectionOf(ws: WebSocket): OwnedConnection | undefined {
  return (ws as TaggedSocket)[kConnection];
}

/** Makes an upgraded `ws` connection a client: table, listeners, heartbeat, onConnect. */
export function acceptConnection(
  owner: ConnectionOwner,
  ws: WebSocket,
  request: IncomingMessage,
  rawSocket: Duplex,
  id: string,
  ip: string,
  data: Record<string, unknown>,
): void {
  const client: WsClient = Object.freeze({
    id,
    socket: ws,
    ip,
    data,
    request: owner.options.keepRequest ? request : undefined,
  });
  const conn = new Connection<ConnectionOwner>(client, rawSocket, owner, owner.options);
  owner.table.add(conn);
  (ws as TaggedSocket)[kConnection] = conn;
  ws.on('error', onSocketError);
  ws.on('message', onSocketMessage);
  ws.on('ping', onSocketPing);
  ws.on('pong', onSocketPong);
  ws.on('close', onSocketClose);
  owner.heartbeat.add(conn);

  owner.log.debug('WebSocket client connected', { clientId: id, ip });
  for (const fn of owner.connectListeners) {
    try {
      fn(client, request);
    } catch (err) {
      owner.log.exception(err, { clientId: id, listener: 'onConnect' });
    }
  }
}

/** Undoes an accept that threw (the 101 is on the wire: the connection is dropped). */
export function abandonConnection(owner: ConnectionOwner, ws: WebSocket, id: string): void {
  const conn = connectionOf(ws);
  if (conn !== undefined) owner.heartbeat.remove(conn);
  owner.table.delete(id);
  ws.terminate();
}

function onSocketError(this: WebSocket, err: Error): void {
  const conn = connectionOf(this);
  if (conn !== undefined) connectionError(conn, err, conn.owner.log, conn.owner.options);
}

function onSocketMessage(this: WebSocket, raw: RawData, isBinary: boolean): void {
  const conn = connectionOf(this);
  if (conn !== undefined) conn.owner.fair.offer(conn, raw, isBinary);
}

function onSocketPing(this: WebSocket, payload: Buffer): void {
  const conn = connectionOf(this);
  if (conn !== undefined) conn.owner.outbound.pong(this, conn, payload);
}

function onSocketPong(this: WebSocket): void {
  const conn = connectionOf(this);
  if (conn !== undefined) conn.owner.heartbeat.pong(conn);
}

function onSocketClose(this: WebSocket, code: number, reason: Buffer): void {
  const conn = connectionOf(this);
  if (conn !== undefined) connectionClosed(conn, code, reason.toString('utf8'));
}

/** The end of a connection: out of every table, then onDisconnect exactly once. */
function connectionClosed(conn: OwnedConnection, code: number, reason: string): void {
  const final = conn.settle(code, reason);
  if (!final) return;
  const { owner, client } = conn;
  owner.fair.drop(conn);
  owner.heartbeat.remove(conn);
  owner.table.remove(conn);
  owner.log.debug('WebSocket client disconnected', {
    clientId: client.id,
    closeCode: final.code,
    reason: final.reason,
  });
  for (const fn of owner.disconnectListeners) {
    try {
      fn(client, final.code, final.reason);
    } catch (err) {
      owner.log.exception(err, { clientId: client.id, listener: 'onDisconnect' });
    }
  }
  conn.resolveClosed();
}
