/**
 * Lenient readers of the presence events a client receives (`$presence`, `$presence_diff`).
 * A server may be newer, older or simply wrong: these keep what is well formed and drop the
 * rest, so that one bad entry never costs a client the whole room. What they return is
 * built on objects without a prototype, so a key such as `__proto__` or `constructor` is an
 * ordinary presence key.
 */
import type {
  PresenceDiffData,
  PresenceEntry,
  PresenceMeta,
  PresenceState,
  PresenceStateData,
  PresenceStats,
} from './presence';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * A meta: kept when it has a non-empty string `clientId`; a missing or non-finite
 * `joinedAt` reads as 0. The application members are copied as they came.
 */
export function readPresenceMeta(value: unknown): PresenceMeta | undefined {
  if (!isRecord(value)) return undefined;
  const { clientId, joinedAt } = value;
  if (typeof clientId !== 'string' || clientId.length === 0) return undefined;
  const meta: PresenceMeta = Object.create(null) as PresenceMeta;
  for (const [name, member] of Object.entries(value)) meta[name] = member;
  meta.clientId = clientId;
  meta.joinedAt = typeof joinedAt === 'number' && Number.isFinite(joinedAt) ? joinedAt : 0;
  return meta;
}

/**
 * Entries by key. A key whose entry has no `metas` array, or no well-formed meta, is left
 * out; a meta whose `clientId` appears twice under one key is kept once (the last).
 */
export function readPresenceState(value: unknown): PresenceState {
  const state: PresenceState = Object.create(null) as PresenceState;
  if (!isRecord(value)) return state;
  for (const [key, entry] of Object.entries(value)) {
    if (!isRecord(entry) || !Array.isArray(entry['metas'])) continue;
    const byClient = new Map<string, PresenceMeta>();
    for (const item of entry['metas'] as unknown[]) {
      const meta = readPresenceMeta(item);
      if (meta) byClient.set(meta.clientId, meta);
    }
    if (byClient.size > 0) state[key] = { metas: [...byClient.values()] } as PresenceEntry;
  }
  return state;
}

/** `{connections, keys}` when both are non-negative integers, else undefined. */
export function readPresenceStats(value: unknown): PresenceStats | undefined {
  if (!isRecord(value)) return undefined;
  const connections = count(value['connections']);
  const keys = count(value['keys']);
  return connections === undefined || keys === undefined ? undefined : { connections, keys };
}

function roomOf(record: Record<string, unknown>): { room: string; namespace: string } | undefined {
  const { room } = record;
  const namespace = record['namespace'] ?? '/';
  if (typeof room !== 'string' || room.length === 0) return undefined;
  if (typeof namespace !== 'string' || !namespace.startsWith('/')) return undefined;
  return { room, namespace };
}

/**
 * `$presence.data`, or undefined when it names no room (`room` a non-empty string,
 * `namespace` starting with "/", "/" when absent) or carries neither a `state` object nor
 * valid `stats`. With both, `state` wins.
 */
export function readPresenceData(data: unknown): PresenceStateData | undefined {
  if (!isRecord(data)) return undefined;
  const where = roomOf(data);
  if (!where) return undefined;
  if (isRecord(data['state'])) return { ...where, state: readPresenceState(data['state']) };
  const stats = readPresenceStats(data['stats']);
  return stats ? { ...where, stats } : undefined;
}

/**
 * `$presence_diff.data`, or undefined when it names no room. A missing or malformed `joins`
 * or `leaves` reads as empty.
 */
export function readPresenceDiff(data: unknown): PresenceDiffData | undefined {
  if (!isRecord(data)) return undefined;
  const where = roomOf(data);
  if (!where) return undefined;
  return {
    ...where,
    joins: readPresenceState(data['joins']),
    leaves: readPresenceState(data['leaves']),
  };
}
