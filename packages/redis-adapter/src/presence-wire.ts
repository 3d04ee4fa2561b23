/**
 * How presence travels between instances: the hash fields and values each instance keeps
 * in Redis, and the messages on the presence channel. Decoders never throw; anything
 * malformed is rejected with a reason, for a log line.
 */
import type { PresenceMeta } from '@pkg/wire';
import { WIRE_VERSION, type Decoded } from './wire';

/** The field of an instance's hash that holds its change counter. */
export const SEQ_FIELD = '~seq';

/** A change of one instance, numbered by that instance (`s`, one more per change). */
export type PresenceMessage =
  | {
      readonly t: 'j';
      readonly o: string;
      readonly s: number;
      readonly ns: string;
      readonly r: string;
      readonly k: string;
      readonly m: PresenceMeta;
    }
  | {
      readonly t: 'l';
      readonly o: string;
      readonly s: number;
      readonly ns: string;
      readonly r: string;
      readonly c: string;
    }
  /** Heartbeat with the sender's last change number. */
  | { readonly t: 'h'; readonly o: string; readonly s: number }
  /** Goodbye: the sender closes; its entries leave. */
  | { readonly t: 'b'; readonly o: string; readonly s: number };

/** One connection in one room, as a hash field. */
export function entryField(namespace: string, room: string, clientId: string): string {
  return JSON.stringify([namespace, room, clientId]);
}

export function entryValue(key: string, meta: PresenceMeta): string {
  return JSON.stringify({ k: key, m: meta });
}

export interface StoredEntry {
  readonly namespace: string;
  readonly room: string;
  readonly clientId: string;
  readonly key: string;
  readonly meta: PresenceMeta;
}

const isString = (v: unknown): v is string => typeof v === 'string' && v !== '';

function isMeta(v: unknown, clientId?: string): v is PresenceMeta {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const m = v as Record<string, unknown>;
  return (
    isString(m['clientId']) &&
    (clientId === undefined || m['clientId'] === clientId) &&
    typeof m['joinedAt'] === 'number'
  );
}

function parse(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** A hash field and its value read back; null when either is malformed. */
export function readEntry(field: string, value: string): StoredEntry | null {
  const f = parse(field);
  const v = parse(value);
  if (!Array.isArray(f) || f.length !== 3 || !f.every(isString)) return null;
  if (typeof v !== 'object' || v === null) return null;
  const { k, m } = v as Record<string, unknown>;
  const [namespace, room, clientId] = f as [string, string, string];
  if (!isString(k) || !isMeta(m, clientId)) return null;
  return { namespace, room, clientId, key: k, meta: m };
}

export function encodePresence(message: PresenceMessage): string {
  return JSON.stringify({ v: WIRE_VERSION, ...message });
}

export function decodePresence(raw: string): Decoded<PresenceMessage> {
  const value = parse(raw);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  const o = value as Record<string, unknown>;
  if (o['v'] !== WIRE_VERSION) return { ok: false, reason: 'unknown format version' };
  if (!isString(o['o'])) return { ok: false, reason: 'no origin node id' };
  if (!Number.isSafeInteger(o['s']) || (o['s'] as number) < 0) {
    return { ok: false, reason: 'no change number' };
  }
  const base = { o: o['o'], s: o['s'] as number };
  switch (o['t']) {
    case 'h':
      return { ok: true, value: { t: 'h', ...base } };
    case 'b':
      return { ok: true, value: { t: 'b', ...base } };
    case 'j':
      if (!isString(o['ns']) || !isString(o['r']) || !isString(o['k']) || !isMeta(o['m'])) {
        return { ok: false, reason: 'malformed join' };
      }
      return {
        ok: true,
        value: { t: 'j', ...base, ns: o['ns'], r: o['r'], k: o['k'], m: o['m'] },
      };
    case 'l':
      if (!isString(o['ns']) || !isString(o['r']) || !isString(o['c'])) {
        return { ok: false, reason: 'malformed leave' };
      }
      return { ok: true, value: { t: 'l', ...base, ns: o['ns'], r: o['r'], c: o['c'] } };
    default:
      return { ok: false, reason: 'unknown presence message type' };
  }
}
