/**
 * The control events of protocol version 1 and the shape of their `data`: `$hello` (client,
 * first message), `$welcome` (server, the answer), `$ping` / `$pong` (the message heartbeat),
 * `$ack` / `$nack` (the client's answer to a server request). Their `$` cannot appear in an
 * application event name, so they never collide with one.
 */
import { isValidSeq } from './envelope';
import { HISTORY_LIMITS, type RoomPosition, type StreamPosition } from './history';
import { isWellFormedName } from './names';

/** The control event names. */
export const ControlEvent = {
  HELLO: '$hello',
  WELCOME: '$welcome',
  PING: '$ping',
  PONG: '$pong',
  ACK: '$ack',
  NACK: '$nack',
  /** Server -> client: the end of one room's recovery (see history.ts). */
  RECOVERED: '$recovered',
  /** Client -> server request: the kept messages of a room. */
  HISTORY: '$history',
  /** Server -> client: a room's presence state. */
  PRESENCE: '$presence',
  /** Server -> client: a batch of presence joins and leaves. */
  PRESENCE_DIFF: '$presence_diff',
  /** Client -> server request: new credentials for the live connection (see refresh.ts). */
  REFRESH: '$refresh',
  /** Server -> client: the client was taken out of a room by a revocation or an expired grant. */
  REVOKED: '$revoked',
} as const;

export type ControlEventName = (typeof ControlEvent)[keyof typeof ControlEvent];

/** Control events a client sends; a server decodes only these with a `$`. */
export const CLIENT_CONTROL_EVENTS: ReadonlySet<string> = new Set([
  ControlEvent.HELLO,
  ControlEvent.PING,
  ControlEvent.ACK,
  ControlEvent.NACK,
  ControlEvent.HISTORY,
  ControlEvent.REFRESH,
]);

/** Longest `$hello.auth`, in characters; a longer one is refused `unauthorized`, close 4401. */
export const MAX_AUTH_LENGTH = 8192;

/** Longest session token (`$welcome.session`, `$hello.resume.session`), in characters. */
export const MAX_SESSION_LENGTH = 128;

/** The range a server clamps the heartbeat to, and the values of a member left out (ms). */
export const HEARTBEAT_LIMITS = {
  min: 1000,
  max: 300_000,
  interval: 25_000,
  timeout: 20_000,
} as const;

/** A message heartbeat: a `$ping` every `interval` ms; dead after `timeout` ms of silence. */
export interface HeartbeatTiming {
  interval: number;
  timeout: number;
}

/** `$hello.data` as a server reads it (heartbeat clamped, defaults filled in). */
export interface HelloData {
  /** The highest protocol version the client speaks. */
  v: number;
  auth?: string;
  heartbeat?: HeartbeatTiming;
  resume?: { session: string; seq: number };
  /**
   * The last position the client saw in each room it was in (at most
   * `HISTORY_LIMITS.maxHelloPositions`): when the server joins this connection to one of
   * those rooms, it replays what was missed and sends `$recovered`.
   */
  positions?: RoomPosition[];
}

/** Why a resume was refused: `$welcome.reason` when `resumed` is false. */
export type ResumeRefusalReason = 'expired' | 'ended' | 'unknown' | 'overflow' | 'identity';

/** `$welcome.data`. */
export interface WelcomeData {
  v: number;
  clientId: string;
  /** What the server granted, or null when no heartbeat was asked for. */
  heartbeat: HeartbeatTiming | null;
  /** With connection state recovery on: the session token and its window. */
  session?: string;
  recovery?: { window: number };
  resumed: boolean;
  reason?: ResumeRefusalReason;
  /** `"unused"`: `$hello.auth` was sent but the server has no auth handler to check it. */
  auth?: 'unused';
  /**
   * When the credentials stop being accepted (ms since the epoch), when the auth handlers
   * gave an expiry: the client sends `$refresh` before then (see refresh.ts).
   */
  expiresAt?: number;
}

/** `$nack.data` codes: the client has no handler, or its handler threw. */
export type NackCode = 'unknown_event' | 'handler_error';

/** `$nack.data`. */
export interface NackData {
  code: NackCode;
  message: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clampHeartbeat(ms: number): number {
  return Math.min(HEARTBEAT_LIMITS.max, Math.max(HEARTBEAT_LIMITS.min, Math.round(ms)));
}

/** Longest room or namespace name `readHello` accepts in `positions` unless told otherwise. */
const DEFAULT_POSITION_NAME_LENGTH = 128;

/**
 * Reads a {@link StreamPosition} strictly: `{offset, epoch}` with `offset` a safe integer
 * from 0 and `epoch` a non-empty string of at most `HISTORY_LIMITS.maxEpochLength`
 * characters. Other members are ignored. The position, or a string saying what is wrong.
 */
export function readStreamPosition(value: unknown): StreamPosition | string {
  if (!isRecord(value)) return 'a position must be an object {"offset": n, "epoch": "..."}';
  const { offset, epoch } = value;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
    return '"offset" must be an integer from 0 to 2^53-1';
  }
  if (typeof epoch !== 'string' || epoch.length === 0) {
    return '"epoch" must be a non-empty string (the epoch of a received "pos")';
  }
  if (epoch.length > HISTORY_LIMITS.maxEpochLength) {
    return `"epoch" must be at most ${HISTORY_LIMITS.maxEpochLength} characters`;
  }
  return { offset, epoch };
}

function readPositions(value: unknown, maxNameLength: number): RoomPosition[] | string {
  const max = HISTORY_LIMITS.maxHelloPositions;
  if (!Array.isArray(value) || value.length > max) {
    return `"positions" must be an array of at most ${max} {"room", "namespace", "offset", "epoch"}`;
  }
  const out: RoomPosition[] = [];
  for (const entry of value as unknown[]) {
    const position = readStreamPosition(entry);
    if (typeof position === 'string') return `"positions": ${position}`;
    const { room, namespace } = entry as Record<string, unknown>;
    if (
      !isWellFormedName(room, maxNameLength) ||
      !isWellFormedName(namespace, maxNameLength) ||
      !namespace.startsWith('/')
    ) {
      return `"positions": each entry needs "room" and "namespace" (starting with "/"), well-formed strings of 1 to ${maxNameLength} characters`;
    }
    out.push({ room, namespace, offset: position.offset, epoch: position.epoch });
  }
  return out;
}

/** Options of {@link readHello}. */
export interface ReadHelloOptions {
  /** Longest room or namespace name in `positions` (the server's own bound). Default 128. */
  maxNameLength?: number;
}

/**
 * Reads `$hello.data` strictly, as a server must: the hello, or a string saying what is
 * malformed (answer `invalid_payload`, then close 1008). The heartbeat comes back clamped to
 * {@link HEARTBEAT_LIMITS}; the length of `auth` is left to the caller (its refusal differs).
 * `positions` holds at most `HISTORY_LIMITS.maxHelloPositions` well-formed entries.
 */
export function readHello(data: unknown, options: ReadHelloOptions = {}): HelloData | string {
  if (!isRecord(data)) return 'the data of $hello must be an object such as {"v": 1}';
  const { v, auth, heartbeat, resume, positions } = data;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    return '"v" must be a positive integer (the highest protocol version the client speaks)';
  }
  if (auth !== undefined && typeof auth !== 'string') return '"auth" must be a string';
  const hello: HelloData = { v };
  if (auth !== undefined) hello.auth = auth;
  if (heartbeat !== undefined && heartbeat !== null) {
    const ok = (x: unknown): boolean => x === undefined || (typeof x === 'number' && x > 0);
    if (!isRecord(heartbeat) || !ok(heartbeat['interval']) || !ok(heartbeat['timeout'])) {
      return '"heartbeat" must be {"interval": ms, "timeout": ms}';
    }
    const interval = heartbeat['interval'] as number | undefined;
    const timeout = heartbeat['timeout'] as number | undefined;
    hello.heartbeat = {
      interval: clampHeartbeat(interval ?? HEARTBEAT_LIMITS.interval),
      timeout: clampHeartbeat(timeout ?? HEARTBEAT_LIMITS.timeout),
    };
  }
  if (resume !== undefined && resume !== null) {
    const session = isRecord(resume) ? resume['session'] : undefined;
    const seq = isRecord(resume) ? resume['seq'] : undefined;
    if (
      typeof session !== 'string' ||
      session.length === 0 ||
      session.length > MAX_SESSION_LENGTH ||
      !(seq === 0 || isValidSeq(seq))
    ) {
      return '"resume" must be {"session": "<token from $welcome>", "seq": <last seq processed>}';
    }
    hello.resume = { session, seq };
  }
  if (positions !== undefined && positions !== null) {
    const read = readPositions(positions, options.maxNameLength ?? DEFAULT_POSITION_NAME_LENGTH);
    if (typeof read === 'string') return read;
    if (read.length > 0) hello.positions = read;
  }
  return hello;
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** `$welcome.data` as a client reads it: every member optional but `heartbeat` and `resumed`. */
export interface ReceivedWelcome extends Omit<Partial<WelcomeData>, 'reason'> {
  heartbeat: HeartbeatTiming | null;
  resumed: boolean;
  /** A {@link ResumeRefusalReason}, or a reason of a newer server, kept as given. */
  reason?: string;
}

/**
 * Reads `$welcome.data` leniently, as a client should: members it does not know are
 * ignored, a malformed member is left out (`heartbeat` null, `resumed` false).
 */
export function readWelcome(data: unknown): ReceivedWelcome {
  const record = isRecord(data) ? data : {};
  const welcome: ReceivedWelcome = { heartbeat: null, resumed: record['resumed'] === true };
  if (typeof record['v'] === 'number') welcome.v = record['v'];
  if (typeof record['clientId'] === 'string') welcome.clientId = record['clientId'];
  const hb = record['heartbeat'];
  if (isRecord(hb)) {
    const interval = positive(hb['interval']);
    const timeout = positive(hb['timeout']);
    if (interval && timeout) welcome.heartbeat = { interval, timeout };
  }
  if (typeof record['session'] === 'string') welcome.session = record['session'];
  const recovery = record['recovery'];
  if (isRecord(recovery)) {
    const window = positive(recovery['window']);
    if (window) welcome.recovery = { window };
  }
  if (typeof record['reason'] === 'string') welcome.reason = record['reason'];
  if (record['auth'] === 'unused') welcome.auth = 'unused';
  const expiresAt = positive(record['expiresAt']);
  if (expiresAt !== undefined) welcome.expiresAt = expiresAt;
  return welcome;
}
