/**
 * The two Lua scripts of the Redis history store and the parsing of their replies.
 *
 * A room keeps two keys in the same hash slot (one `{namespace:room}` tag): a hash with the
 * room's epoch (`e`), last offset (`o`) and the time of its last message (`t`), and a stream whose entry ids are `0-<offset>`,
 * each with the time it was kept (`t`, ms, Redis clock) and the delivered text (`d`).
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { isBinaryFrame } from '@pkg/wire';
import type { LostRange } from '@pkg/wire';

/**
 * Assigns the next position, builds the text, keeps it and publishes it: one EVALSHA per
 * broadcast. A new epoch (the caller's candidate) replaces the stored one when there is
 * none, when the caller asks (it delivered messages of that room while Redis was away), or
 * when the stream is gone although offsets were issued (deleted, or lost by Redis), so a
 * client holding an old position is told `epoch_changed` instead of missing messages.
 *
 * The hash also keeps `g`, the time since which the stream holds every message of the room
 * (for quiet positions, see the read script): when the stream starts from nothing, no
 * message came within the meta ttl before it; when it replaces another, now.
 *
 * An entry keeps the clients its broadcast left out in `x` (a JSON array of client ids, or
 * `*` when they were too many to keep), so that a read for one of them leaves it out.
 *
 * A binary message (ARGV[11] `b`) is kept as the bytes of its binary frame: `head` is the
 * frame up to the epoch of its `pos` (docs/protocol.md, "Binary frames"), `tail` the
 * payload, and the script puts the epoch (a u8 length and its bytes) and the offset (a
 * big-endian u64) between them, as `encodeBinaryFrame` would. Redis strings are
 * binary-safe: the bytes are kept and published as they are, never as a text.
 *
 * KEYS: meta hash, stream. ARGV: size, ttl ms, candidate epoch, force ('1'/'0'), channel,
 * pub/sub header (ends with a newline), head, tail, meta ttl ms, except ('' = nobody),
 * kind ('b' = binary frame, '' = text).
 * Reply: { offset, epoch, 1 when the candidate was used else 0 }.
 */
export const PUBLISH_SCRIPT = `
local meta, stream = KEYS[1], KEYS[2]
local now = redis.call('TIME')
local ms = now[1] * 1000 + math.floor(now[2] / 1000)
local epoch = redis.call('HGET', meta, 'e')
local fresh = 0
if (not epoch) or ARGV[4] == '1'
  or (redis.call('EXISTS', stream) == 0 and tonumber(redis.call('HGET', meta, 'o') or '0') > 0) then
  -- From nothing (no epoch), no message came in the meta ttl before now; a replaced stream
  -- holds nothing of before now.
  local since = ms
  if not epoch then since = ms - tonumber(ARGV[9]) + 1 end
  epoch = ARGV[3]
  fresh = 1
  redis.call('DEL', stream)
  redis.call('HSET', meta, 'e', epoch, 'o', 0, 'g', string.format('%.0f', since))
end
local offset = redis.call('HINCRBY', meta, 'o', 1)
local t = string.format('%.0f', ms)
local text
if ARGV[11] == 'b' then
  local n, u64 = offset, {}
  for i = 8, 1, -1 do u64[i] = n % 256 n = math.floor(n / 256) end
  text = ARGV[7] .. string.char(#epoch) .. epoch .. string.char(unpack(u64)) .. ARGV[8]
else
  text = ARGV[7] .. '"' .. epoch .. '","offset":' .. offset .. ARGV[8]
end
if ARGV[10] == '' then
  redis.call('XADD', stream, 'MAXLEN', '~', ARGV[1], '0-' .. offset, 't', t, 'd', text)
else
  redis.call('XADD', stream, 'MAXLEN', '~', ARGV[1], '0-' .. offset, 't', t, 'd', text, 'x', ARGV[10])
end
redis.call('HSET', meta, 't', t)
redis.call('PEXPIRE', stream, ARGV[2])
redis.call('PEXPIRE', meta, ARGV[9])
redis.call('PUBLISH', ARGV[5], ARGV[6] .. text)
return {offset, epoch, fresh}
`;

/**
 * Reads a room: the messages after a position (all of them or none, with a reason), or the
 * last ones. Only the last `size` offsets and entries younger than `ttl` count as kept,
 * whatever approximate trimming left in the stream. A stream that is gone although its last
 * message is younger than `ttl` was lost (deleted, evicted): `epoch_changed`, as the next
 * message will start a new epoch; one gone because it expired: `too_far_behind`.
 *
 * Reading writes nothing, so it never makes a key. A room without an epoch answers a quiet
 * position: offset 0 of the epoch `~<ms>` (the time of the read, Redis clock). From a quiet
 * position read at T, the read is complete when no message can have come since: the room
 * still has no epoch and T is within the meta ttl (a message would have kept the hash that
 * long), or its stream holds every message since T (`g` <= T: replayed from offset 1).
 *
 * With a reader (a client id), entries whose `x` names it are left out; an entry whose `x`
 * is `*` is left out too, and the read is then not complete (`too_far_behind` after a
 * position: all or none, as always).
 *
 * Offsets a failover lost (the hash's field `l`, written by the cluster scripts) are skipped:
 * the read answers the kept messages around them with the reason `messages_lost` and the lost
 * offsets within its span as its fourth element.
 *
 * KEYS: meta hash, stream. ARGV: since offset ('' = none), since epoch, limit, size, ttl ms,
 * meta ttl ms, reader ('' = none).
 * Reply: { epoch, offset, reason ('' = complete), lost ('<from>-<to> ' each, or 0), offset1,
 * text1, offset2, text2, ... } oldest first.
 */
export const READ_SCRIPT = `
local meta, stream = KEYS[1], KEYS[2]
local now = redis.call('TIME')
local ms = now[1] * 1000 + math.floor(now[2] / 1000)
local oldest = ms - tonumber(ARGV[5])
local sinceEpoch = ARGV[2]
local quiet = nil
if ARGV[1] ~= '' then
  local t = string.match(sinceEpoch, '^~(%d+)$')
  if t then quiet = tonumber(t) end
end
local epoch = redis.call('HGET', meta, 'e')
if not epoch then
  local out = {'~' .. string.format('%.0f', ms), 0, '', 0}
  if ARGV[1] == '' then return out end
  if not quiet then out[3] = 'epoch_changed' return out end
  if tonumber(ARGV[1]) ~= 0 then out[3] = 'invalid_position' return out end
  if ms - quiet >= tonumber(ARGV[6]) then out[3] = 'too_far_behind' end
  return out
end
local last = tonumber(redis.call('HGET', meta, 'o') or '0')
local out = {epoch, last, '', 0}
if quiet then
  local g = tonumber(redis.call('HGET', meta, 'g') or '')
  if tonumber(ARGV[1]) ~= 0 then out[3] = 'invalid_position' return out end
  if (not g) or quiet < g then out[3] = 'epoch_changed' return out end
  sinceEpoch = epoch
end
local limit, size = tonumber(ARGV[3]), tonumber(ARGV[4])
local first = math.max(1, last - size + 1)
local lost = last > 0 and redis.call('EXISTS', stream) == 0
  and tonumber(redis.call('HGET', meta, 't') or '0') >= oldest
local function offsetOf(id) return tonumber(string.match(id, '%-(%d+)$')) end
local function fieldOf(fields, name)
  for i = 1, #fields, 2 do if fields[i] == name then return fields[i + 1] end end
  return nil
end
local reader = ARGV[7]
-- 'show', 'skip' (its broadcast left the reader out), or 'hide' (left out, not complete).
local function visibility(fields)
  if reader == '' then return 'show' end
  local x = fieldOf(fields, 'x')
  if not x then return 'show' end
  if x == '*' then return 'hide' end
  for _, id in ipairs(cjson.decode(x)) do if id == reader then return 'skip' end end
  return 'show'
end
-- Offsets handed out but kept nowhere (field l, '<from>-<to> ' each, ascending; see
-- cluster-scripts.ts) from offset 'after' on, clipped to it: skipped by a read, reported.
local function gapsFrom(after)
  local gaps, count, text = {}, 0, ''
  for a, b in string.gmatch(redis.call('HGET', meta, 'l') or '', '(%d+)%-(%d+) ') do
    a, b = math.max(tonumber(a), after), tonumber(b)
    if b >= a then
      gaps[#gaps + 1] = {a, b}
      count = count + b - a + 1
      text = text .. a .. '-' .. b .. ' '
    end
  end
  return gaps, count, text
end
if ARGV[1] ~= '' then
  local since = tonumber(ARGV[1])
  if epoch ~= sinceEpoch then out[3] = 'epoch_changed' return out end
  if since > last then out[3] = 'invalid_position' return out end
  if since == last then return out end
  if lost then out[3] = 'epoch_changed' return out end
  if since + 1 < first or last - since > limit then out[3] = 'too_far_behind' return out end
  local gaps, missing, gapText = gapsFrom(since + 1)
  local g = 1
  local function past(o)
    while g <= #gaps and o > gaps[g][2] do g = g + 1 end
    if g <= #gaps and o >= gaps[g][1] then return gaps[g][2] + 1 end
    return o
  end
  local entries = redis.call('XRANGE', stream, '(0-' .. since, '+', 'COUNT', limit)
  if #entries ~= last - since - missing then out[3] = 'too_far_behind' return out end
  local want = past(since + 1)
  for _, entry in ipairs(entries) do
    local t = tonumber(fieldOf(entry[2], 't') or '0')
    local seen = visibility(entry[2])
    if offsetOf(entry[1]) ~= want or t < oldest or seen == 'hide' then
      out = {epoch, last, 'too_far_behind', 0}
      return out
    end
    if seen == 'show' then
      out[#out + 1] = want
      out[#out + 1] = fieldOf(entry[2], 'd') or ''
    end
    want = past(want + 1)
  end
  if missing > 0 then out[3] = 'messages_lost' out[4] = gapText end
  return out
end
if last == 0 then return out end
if lost then out[3] = 'epoch_changed' return out end
local entries = redis.call('XREVRANGE', stream, '+', '0-' .. first, 'COUNT', limit)
local kept = {}
for _, entry in ipairs(entries) do
  if tonumber(fieldOf(entry[2], 't') or '0') < oldest then break end
  kept[#kept + 1] = entry
end
local older = #kept > 0 and #kept == #entries and #kept == limit
  and offsetOf(kept[#kept][1]) > first
local hidden = false
for i = #kept, 1, -1 do
  local seen = visibility(kept[i][2])
  if seen == 'hide' then hidden = true end
  if seen == 'show' then
    out[#out + 1] = offsetOf(kept[i][1])
    out[#out + 1] = fieldOf(kept[i][2], 'd') or ''
  end
end
-- A message hidden from every reader is missed, not merely older: too_far_behind.
if hidden then out[3] = 'too_far_behind' elseif older then out[3] = 'incomplete' end
if #kept > 0 and not hidden then
  local _, missing, gapText = gapsFrom(offsetOf(kept[#kept][1]))
  if missing > 0 then out[3] = 'messages_lost' out[4] = gapText end
end
return out
`;

export const PUBLISH_SHA = createHash('sha1').update(PUBLISH_SCRIPT).digest('hex');
export const READ_SHA = createHash('sha1').update(READ_SCRIPT).digest('hex');

/** The publish script's reply, checked. */
export interface PublishReply {
  readonly offset: number;
  readonly epoch: string;
  readonly fresh: boolean;
}

export function parsePublishReply(reply: unknown): PublishReply {
  if (Array.isArray(reply) && reply.length === 3) {
    const [offset, epoch, fresh] = reply as unknown[];
    if (Number.isSafeInteger(offset) && typeof epoch === 'string' && epoch !== '') {
      return { offset: offset as number, epoch, fresh: fresh === 1 };
    }
  }
  throw new Error('unexpected reply from the history publish script');
}

/** The read script's reply, checked. `reason` is '' when complete. */
export interface ReadReply {
  readonly epoch: string;
  readonly offset: number;
  readonly reason: string;
  /** With `messages_lost`: the offsets the read skipped because a failover lost them. */
  readonly lost: LostRange[];
  /** Texts, and binary frames as their bytes (read as bytes, see `parseReadReply`). */
  readonly messages: { offset: number; text: string | Uint8Array }[];
}

/** A reply string, read as bytes (a Buffer) or as a string. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
}

/** Reads the script's `'<from>-<to> '` list; anything else reads as no range. */
function parseLost(value: unknown): LostRange[] {
  const text = textOf(value);
  if (text === undefined) return [];
  const lost: LostRange[] = [];
  for (const [, from, to] of text.matchAll(/(\d+)-(\d+) /g)) {
    lost.push({ from: Number(from), to: Number(to) });
  }
  return lost;
}

/**
 * The read script's reply, checked: strings, or bytes when read in buffer mode (then a kept
 * binary frame stays bytes, a copy of the reply's, and a text is decoded as UTF-8).
 */
export function parseReadReply(reply: unknown): ReadReply {
  if (!Array.isArray(reply) || reply.length < 4 || reply.length % 2 === 1) {
    throw new Error('unexpected reply from the history read script');
  }
  const [rawEpoch, offset, rawReason, lost] = reply as unknown[];
  const epoch = textOf(rawEpoch);
  const reason = textOf(rawReason);
  if (
    typeof epoch !== 'string' ||
    epoch === '' ||
    !Number.isSafeInteger(offset) ||
    typeof reason !== 'string'
  ) {
    throw new Error('unexpected reply from the history read script');
  }
  const messages: { offset: number; text: string | Uint8Array }[] = [];
  for (let i = 4; i < reply.length; i += 2) {
    const o = reply[i] as unknown;
    const raw = reply[i + 1] as unknown;
    const text = Buffer.isBuffer(raw) && isBinaryFrame(raw) ? new Uint8Array(raw) : textOf(raw);
    if (!Number.isSafeInteger(o) || text === undefined) {
      throw new Error('unexpected message in the history read reply');
    }
    messages.push({ offset: o as number, text });
  }
  return { epoch, offset: offset as number, reason, lost: parseLost(lost), messages };
}
