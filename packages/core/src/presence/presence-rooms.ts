/**
 * Which rooms track presence (the `presence` setting: `{match, namespace?}` patterns, `*`
 * matching any run of characters), and the size bound of application metas.
 */
import { Buffer } from 'node:buffer';
import type { PresenceMeta } from '@pkg/wire';
import { createCoreError } from '../errors';

/** One entry of the `presence` setting. */
export interface PresencePattern {
  /** A glob on the room name: `*` matches any run of characters (`chat:*`, `*`). */
  match: string;
  /** The namespace the pattern applies to; every namespace when left out. */
  namespace?: string;
}

/** Members a meta always has; the application cannot set them. */
const RESERVED = new Set(['clientId', 'joinedAt']);

function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[\\^$.+?()[\]{}|/]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${body}$`);
}

/** Compiled once: `matches(room, namespace)` answers whether the room tracks presence. */
export class PresenceRooms {
  readonly #patterns: ReadonlyArray<{ re: RegExp; namespace: string | undefined }>;

  constructor(patterns: readonly PresencePattern[]) {
    this.#patterns = patterns.map((p) => ({ re: globToRegExp(p.match), namespace: p.namespace }));
  }

  /** True when no pattern is configured (presence off). */
  get empty(): boolean {
    return this.#patterns.length === 0;
  }

  matches(room: string, namespace: string): boolean {
    for (const p of this.#patterns) {
      if ((p.namespace === undefined || p.namespace === namespace) && p.re.test(room)) return true;
    }
    return false;
  }
}

/** The check of one `presence` entry: null when good, else what was expected. */
export function presencePatternProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'an object such as { match: "chat:*" }';
  }
  const entry = value as Record<string, unknown>;
  for (const key of Object.keys(entry)) {
    if (key !== 'match' && key !== 'namespace') return `{match, namespace?} without "${key}"`;
  }
  if (typeof entry['match'] !== 'string' || entry['match'] === '') {
    return '{match, namespace?} with match a non-empty room glob such as "chat:*"';
  }
  const ns = entry['namespace'];
  if (ns !== undefined && (typeof ns !== 'string' || !ns.startsWith('/'))) {
    return '{match, namespace?} with namespace a string starting with "/"';
  }
  return null;
}

/**
 * The meta of a connection: `{clientId, joinedAt}` plus the application's members (the
 * reserved ones are ignored). Throws a RangeError `PKG_ERR_CORE_PRESENCE_META_TOO_LARGE`
 * when the application's members serialise to more than `maxBytes` bytes, and a TypeError
 * `PKG_ERR_CORE_INVALID_ARGUMENT` when they are not a JSON object.
 */
export function buildMeta(
  clientId: string,
  joinedAt: number,
  extra: unknown,
  maxBytes: number,
  method: string,
): PresenceMeta {
  if (extra === undefined || extra === null) return { clientId, joinedAt };
  if (typeof extra !== 'object' || Array.isArray(extra)) {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      `${method}: the presence meta must be a plain object such as { name: "Ada" }, got ${Array.isArray(extra) ? 'an array' : typeof extra}.`,
    );
  }
  const own: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(extra)) if (!RESERVED.has(k)) own[k] = v;
  let text: string;
  try {
    text = JSON.stringify(own);
  } catch {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      `${method}: the presence meta cannot be serialised as JSON (a cycle or a BigInt); pass plain data.`,
    );
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) {
    throw createCoreError(
      RangeError,
      'PKG_ERR_CORE_PRESENCE_META_TOO_LARGE',
      `${method}: the presence meta is ${bytes} bytes as JSON, over presence_max_meta_bytes (${maxBytes}); keep it small (a name, an avatar URL) or raise the limit.`,
    );
  }
  return { ...(JSON.parse(text) as Record<string, unknown>), clientId, joinedAt };
}
