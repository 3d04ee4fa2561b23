/**
 * The history scripts as they run on a Redis Cluster (the adapter's `cluster` option).
 *
 * They are the scripts of history-scripts.ts with two changes, made here so that a change of
 * those scripts carries over by itself:
 *
 * - a room's messages go out with SPUBLISH (sharded pub/sub) on the room's channel, which
 *   shares the hash slot of the room's two keys (cluster-channels.ts);
 * - the room remembers which node wrote it last (field `w` of its hash, `CLUSTER MYID`).
 *   When another node answers for the room now, the keys either came over whole (a slot
 *   migration: the previous writer is still a healthy master) or a replica took over after
 *   a failover (the previous writer failed or is a replica now). After a failover the last
 *   writes before it may never have reached the replica, so the positions clients hold may
 *   name messages that are gone and would be numbered again: the room is dropped, the next
 *   message starts a new epoch, and a client that recovers is told `epoch_changed`.
 */
import { createHash } from 'node:crypto';
import { PUBLISH_SCRIPT, PUBLISH_SHA, READ_SCRIPT, READ_SHA } from './history-scripts';

/** Runs before a script: drops a room whose last writer is gone (a failover). KEYS[1] is the room's hash. */
const BEFORE = `
local __me = redis.call('CLUSTER', 'MYID')
local __writer = redis.call('HGET', KEYS[1], 'w')
if __writer and __writer ~= __me then
  local __healthy = false
  for __line in string.gmatch(redis.call('CLUSTER', 'NODES'), '[^\\n]+') do
    local __id, __flags = string.match(__line, '^(%S+) %S+ (%S+)')
    if __id == __writer then
      __healthy = string.find(__flags, 'master', 1, true) ~= nil
        and string.find(__flags, 'fail', 1, true) == nil
    end
  end
  if not __healthy then redis.call('DEL', KEYS[1], KEYS[2]) end
end
local __reply = (function()
`;

/** Runs after it: marks this node as the room's writer (only when the room exists). */
const AFTER = `
end)()
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'w', __me) end
return __reply
`;

/**
 * The publish script's PUBLISH of the kept message, and its cluster form: SPUBLISH, with a
 * first line `#<epoch>:<offset>` that the receiving link reads to notice a message it did
 * not get (cluster-connection.ts) and removes before the adapter sees the message.
 */
const PUBLISH_CALL = "redis.call('PUBLISH', ARGV[5], ARGV[6] .. text)";
const SPUBLISH_CALL =
  "redis.call('SPUBLISH', ARGV[5], '#' .. epoch .. ':' .. offset .. '\\n' .. ARGV[6] .. text)";

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
