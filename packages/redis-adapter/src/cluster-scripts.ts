/**
 * The history scripts as they run on a Redis Cluster (the adapter's `cluster` option).
 *
 * They are the scripts of history-scripts.ts with two changes, made here so that a change of
 * those scripts carries over by itself:
 *
 * - a room's messages go out with SPUBLISH (sharded pub/sub) on the room's channel, which
 *   shares the hash slot of the room's two keys (cluster-channels.ts);
 * - the room's offsets never go back after a failover. A replica that took over may lack the
 *   last writes of its master (a forced failover after the master died: replication is
 *   asynchronous), so its stream may end before offsets that were already handed out,
 *   published and delivered. Every call carries, as its last four arguments, what the
 *   calling instance knows the room reached: `<epoch> <offset>` of the last message it
 *   published and of the last one its subscription received ('' when none). When the
 *   room's epoch is one of them and its offset is behind, the offsets in between were lost:
 *   the range is recorded (field `l` of the hash, `<from>-<to> ` each) and the next message
 *   comes after it, in the same epoch. A client that recovers from before the range is told
 *   `too_far_behind` (its missed messages are not all kept) and one at or past its end
 *   recovers, so only the messages in flight during the failover are reported missing. A
 *   manual failover (the replica caught up first) loses nothing and changes nothing; the
 *   epoch changes only when the room's stream itself is gone (the publish script's rule).
 */
import { createHash } from 'node:crypto';
import { PUBLISH_SCRIPT, PUBLISH_SHA, READ_SCRIPT, READ_SHA } from './history-scripts';

/** How many trailing arguments carry what the caller knows (two `<epoch>, <offset>` pairs). */
export const KNOWN_ARGS = 4;

/** Runs before a script: moves the room's offset past what was handed out and lost. KEYS[1] is the room's hash. */
const BEFORE = `
local __epoch = redis.call('HGET', KEYS[1], 'e')
if __epoch and #ARGV >= ${KNOWN_ARGS} then
  local __last = tonumber(redis.call('HGET', KEYS[1], 'o') or '0')
  local __known = __last
  for __i = #ARGV - ${KNOWN_ARGS - 1}, #ARGV - 1, 2 do
    if ARGV[__i] == __epoch then
      local __o = tonumber(ARGV[__i + 1]) or 0
      if __o > __known then __known = __o end
    end
  end
  if __known > __last then
    local __lost = redis.call('HGET', KEYS[1], 'l') or ''
    redis.call('HSET', KEYS[1], 'o', __known, 'l', __lost .. (__last + 1) .. '-' .. __known .. ' ')
  end
end
return (function()
`;

const AFTER = `
end)()
`;

/**
 * The publish script's PUBLISH of the kept message, and its cluster form: SPUBLISH, with a
 * first line `#<epoch>:<offset>` that the receiving link reads to notice a message it did
 * not get (cluster-connection.ts) and removes before the adapter sees the message.
 */
const PUBLISH_CALL = "redis.call('PUBLISH', ARGV[5], ARGV[6] .. text)";
const SPUBLISH_CALL =
  "redis.call('SPUBLISH', ARGV[5], '#' .. epoch .. ':' .. offset .. '\\n' .. ARGV[6] .. text)";

/**
 * Only the correction of a room's offset (KEYS: the room's hash and stream; ARGV: what the
 * caller knows, as for the other scripts). An instance subscribed to a room runs it when it
 * subscribes the room again after a topology change, so that the room's offset goes past
 * the messages it received even when the next message comes from an instance that knows
 * fewer of them.
 */
export const CLAIM_SCRIPT = BEFORE + 'return 0' + AFTER;

/** A script of history-scripts.ts made ready for a Redis Cluster. */
export function clusterScript(script: string): string {
  return BEFORE + script.replace(PUBLISH_CALL, SPUBLISH_CALL) + AFTER;
}

if (!PUBLISH_SCRIPT.includes(PUBLISH_CALL)) {
  // The publish script changed: its cluster form must be brought in line here.
  throw new Error('cluster-scripts.ts: the history publish script no longer has its PUBLISH call');
}

interface ClusterVariant {
  readonly sha: string;
  readonly script: string;
}

function variant(script: string): ClusterVariant {
  const text = clusterScript(script);
  return { sha: createHash('sha1').update(text).digest('hex'), script: text };
}

const VARIANTS = new Map<string, ClusterVariant>([
  [PUBLISH_SHA, variant(PUBLISH_SCRIPT)],
  [READ_SHA, variant(READ_SCRIPT)],
]);
const BY_SCRIPT = new Map<string, ClusterVariant>([
  [PUBLISH_SCRIPT, VARIANTS.get(PUBLISH_SHA)!],
  [READ_SCRIPT, VARIANTS.get(READ_SHA)!],
]);

/** The cluster form of a script named by its sha (unchanged when it has none). */
export function clusterSha(sha: string): string {
  return VARIANTS.get(sha)?.sha ?? sha;
}

/** The cluster form of a script's text (unchanged when it has none). */
export function clusterScriptText(script: string): string {
  return BY_SCRIPT.get(script)?.script ?? script;
}
