/**
 * Which rooms track presence (the `presence` setting: `{match, namespace?}` patterns, `*`
 * matching any run of characters), and the size bound of application metas.
 */
import { Buffer } from 'node:buffer';
import type { PresenceMeta } from '@pkg/wire';
import { createCoreError } from '../errors';
import type { PresencePattern } from '../config/options';

export type { PresencePattern } from '../config/options';

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
