/**
 * The one key of a room: a (namespace, room) pair as a single string, for every table and
 * store that keys something by room (history, presence, recovery holds, the Redis keys and
 * channels of a cluster, a client's own tables).
 *
 * Each name is percent-encoded (`encodeURIComponent`; a lone surrogate, which has no UTF-8
 * form, is written `%uD800`, which that function never produces), then the two are joined
 * with `:`. An encoded name never contains `:`, so the pair splits back in exactly one way,
 * and different pairs never share a key, whatever characters the names hold (separators,
 * NUL, newlines, braces). The key is printable ASCII without `{` or `}`, so it is safe in a
 * Redis key, a channel name or a log line, and can be wrapped in a Redis Cluster hash tag
 * (`{<key>}`) as it is.
 */

/** A surrogate that is not half of a pair (the `u` flag reads pairs as one code point). */
const LONE_SURROGATE = /\p{Surrogate}/u;
const LONE_SURROGATES = /\p{Surrogate}/gu;

/**
 * One name percent-encoded, never throwing: the same for two names only when they are equal,
 * and never containing `:`, `{` or `}`.
 */
export function encodeKeyName(name: string): string {
  if (!LONE_SURROGATE.test(name)) return encodeURIComponent(name);
  let out = '';
  let from = 0;
  for (const match of name.matchAll(LONE_SURROGATES)) {
    const at = match.index;
    out += encodeURIComponent(name.slice(from, at));
    out += `%u${name.charCodeAt(at).toString(16).toUpperCase()}`;
    from = at + 1;
  }
  return out + encodeURIComponent(name.slice(from));
}

/** The key of room `room` of namespace `namespace` (see the file's comment). */
export function roomKey(namespace: string, room: string): string {
  return `${encodeKeyName(namespace)}:${encodeKeyName(room)}`;
}
