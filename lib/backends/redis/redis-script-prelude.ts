/*
 * What every Lua script of the Redis backend runs first (the prelude: the check, in the same script, that the store is
 * still the one this node knew, and the helpers the scripts share), the keys they keep, and the one script that runs
 * without it (declaring a store new). The scripts themselves: `redis-scripts.ts` (record maps, counters) and
 * `tasks/redis-task-scripts.ts`.
 *
 * Keys, all under one hash tag (`{<prefix>}`, so a Redis Cluster keeps them in one slot and a script may touch any):
 * - `T:inc`: the store's incarnation, a random id; gone after a restart that lost the data. A store without one looks
 *   exactly like one that lost everything, so the call that finds none writes it and counts it as a loss (every
 *   permit then waits out the recovery), unless whoever set the store up declared it new ({@link DECLARE_FRESH}).
 * - `T:epoch`: bumped by every write; each node remembers the highest it saw, so a store that comes back with a lower
 *   one (a restart that lost its last writes, a replica promoted before it had them) is found by the next call of any
 *   node that saw more.
 * - `T:lost_at`, `T:lost_inc`: since when (ms, the server's clock) the store may have lost acknowledged writes, and
 *   for which incarnation that was found.
 * - `T:replid`: the replication id of the server that last wrote (`master_replid`): a replica promoted to primary
 *   takes a new one, and so does a restarted server, so the first call on it finds the keys written under the old id,
 *   a loss even for a node that never saw the writes the old server had and this one missed.
 * - `T:runid`: the `run_id` of the server process that took up that replication id: a restart is another process, a
 *   promoted replica names its old primary's id as `master_replid2`, so the loss says which of the two it was.
 * - `T:forget`: the maps whose records a loss drops (`forgetOnRestore`).
 * - `T:m:<map>` (hash: key → value), `T:ttl:<map>` (sorted set: key by expiry ms), `T:lost:<map>` (hash: key → when
 *   marked lost), `T:lostv:<map>` (hash: key → the value a loss dropped), `T:counters` (hash: name → value).
 * - `T:keys:<map>` (set), for the maps in `T:forget` only (leases): the keys the library's scripts left in the map. A
 *   key listed there and gone from the map was removed by another client; the next call of any node marks it lost
 *   and tells its removal (see the end of the prelude).
 * - `T:tp:<type>`, `T:tw:<type>`, `T:tr:<type>`, `T:tu:<type>`, `T:tf`: the indexes of the tasks map (`T:m:tasks`) that
 *   the task store's own scripts keep beside it, and `T:ix:tasks`, what each task is indexed by (see
 *   `tasks/redis-task-scripts.ts`).
 * - Changes are published on `T:changes` as `w<bytes>:<map><bytes>:<key><value>`, or `r<bytes>:<map><bytes>:<key>` for
 *   a removal (see `tell`); `l` when a call found a loss of data.
 *
 * Every script takes KEYS[1] = `T` and ARGV[1..3] = the incarnation this node knows ('' if none), the highest epoch it
 * saw, and a new incarnation id to use if the store has none; the rest of ARGV is its own. Every script answers
 * `{ result, incarnation, epoch, lost_at or false, forgotten or false, why or false }`: the last two set only when
 * this call found a loss (the records it dropped, and why it counts as one).
 */

/** The check every script runs first, and the helpers the scripts share. */
const PRELUDE = `
local T = KEYS[1]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local forgotten = {}
-- Why this call found a loss (false: it found none): 'empty' (no incarnation: new, or lost everything), 'restarted'
-- (another incarnation than the caller knew), 'behind' (an older epoch than the caller saw), and for state written
-- under another replication id: 'failed-over' (a replica of its writer, promoted), 'reloaded' (another process: a
-- restart that read its files), 'replaced' (neither could be told).
local found = false
local function lose(inc, why)
  found = why
  local at = now_ms()
  local before = tonumber(redis.call('GET', T .. ':lost_at') or '0')
  if before > at then at = before end
  redis.call('SET', T .. ':lost_at', at)
  redis.call('SET', T .. ':lost_inc', inc)
  for _, map in ipairs(redis.call('SMEMBERS', T .. ':forget')) do
    local all = redis.call('HGETALL', T .. ':m:' .. map)
    for i = 1, #all, 2 do
      redis.call('HSET', T .. ':lost:' .. map, all[i], at)
      redis.call('HSET', T .. ':lostv:' .. map, all[i], all[i + 1])
      forgotten[#forgotten + 1] = map .. ' ' .. all[i]
    end
    redis.call('DEL', T .. ':m:' .. map, T .. ':ttl:' .. map, T .. ':keys:' .. map)
  end
  -- Every node that hears it reads its views again (and learns of the loss from the answer).
  redis.call('PUBLISH', T .. ':changes', 'l')
end
local inc = redis.call('GET', T .. ':inc')
local epoch = tonumber(redis.call('GET', T .. ':epoch') or '0')
local known_inc, known_epoch = ARGV[1], tonumber(ARGV[2])
-- The server's replication id: a replica promoted to primary and a restarted server each take a new one, so state
-- held under another id may be missing writes the server that wrote it had. Which of the two it was: a promoted
-- replica keeps the id of the primary it followed as master_replid2; a restart is another process (run_id).
local replication = redis.call('INFO', 'replication')
local replid = string.match(replication, 'master_replid:(%w+)')
local written_by = redis.call('GET', T .. ':replid')
local ran_by = redis.call('GET', T .. ':runid')
local run_id = false
if written_by ~= replid or not ran_by then run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)') end
local function moved()
  if string.match(replication, 'master_replid2:(%w+)') == written_by then return 'failed-over' end
  if ran_by and ran_by ~= run_id then return 'reloaded' end
  return 'replaced'
end
if not inc then
  inc = ARGV[3]
  redis.call('SET', T .. ':inc', inc)
  lose(inc, 'empty')
elseif known_inc ~= '' and inc ~= known_inc and redis.call('GET', T .. ':lost_inc') ~= inc then
  lose(inc, 'restarted')
elseif epoch < known_epoch then
  lose(inc, 'behind')
elseif written_by and written_by ~= replid then
  lose(inc, moved())
end
if written_by ~= replid then redis.call('SET', T .. ':replid', replid) end
if run_id and run_id ~= ran_by then redis.call('SET', T .. ':runid', run_id) end
if epoch < known_epoch then
  epoch = known_epoch
  redis.call('SET', T .. ':epoch', epoch)
end
local function answer(result)
  return { result, inc, epoch, redis.call('GET', T .. ':lost_at') or false, found and forgotten or false, found }
end
local function bump()
  epoch = redis.call('INCR', T .. ':epoch')
end
local function live(map, key, now)
  local exp = redis.call('ZSCORE', T .. ':ttl:' .. map, key)
  return not exp or tonumber(exp) > now
end
-- A change as the feed reads it (redis-feed.ts): 'w' or 'r', then the map and the key each as <bytes>:<text>, then
-- the value as it is (nothing escaped, nothing to decode twice).
local function tell(map, key, value)
  local head = #map .. ':' .. map .. #key .. ':' .. key
  if value then
    redis.call('PUBLISH', T .. ':changes', 'w' .. head .. value)
  else
    redis.call('PUBLISH', T .. ':changes', 'r' .. head)
  end
end
local function expiry(map, key, ttl, now)
  if ttl ~= '' then
    redis.call('ZADD', T .. ':ttl:' .. map, now + tonumber(ttl), key)
  else
    redis.call('ZREM', T .. ':ttl:' .. map, key)
  end
end
-- The maps of leases (T:forget) keep beside them, in T:keys:<map>, the keys the library's scripts left in them: only
-- these scripts write those maps, so a key listed there and gone from the map went without the library removing it.
local function kept(map, key)
  if redis.call('SISMEMBER', T .. ':forget', map) == 1 then redis.call('SADD', T .. ':keys:' .. map, key) end
end
local function unkept(map, key)
  if redis.call('SISMEMBER', T .. ':forget', map) == 1 then redis.call('SREM', T .. ':keys:' .. map, key) end
end
-- Writes a record whether or not one was there (create, put): kept, its expiry set, the epoch bumped, the change told.
local function write(map, key, value, ttl, now)
  redis.call('HSET', T .. ':m:' .. map, key, value)
  kept(map, key)
  expiry(map, key, ttl, now)
  bump()
  tell(map, key, value)
end
-- Drops a record and its expiry, no longer kept; answers 1 if it was there (the caller bumps and tells).
local function drop(map, key)
  local had = redis.call('HDEL', T .. ':m:' .. map, key)
  redis.call('ZREM', T .. ':ttl:' .. map, key)
  unkept(map, key)
  return had
end
-- A key of a map of leases removed by another client (a DEL or HDEL by hand, a cleanup script, an eviction): nothing
-- in the map says it existed any more, yet its holder may still run under it. Found by the next call of any node:
-- marked lost since now, as a loss of data marks what it drops (whoever rebuilds it waits out its permits), and told
-- removed to every node (its holder hears it and stops). A FLUSHDB takes T:inc too: a loss of everything, above.
if not found then
  for _, map in ipairs(redis.call('SMEMBERS', T .. ':forget')) do
    local listed, records = T .. ':keys:' .. map, T .. ':m:' .. map
    local known, held = redis.call('SCARD', listed), redis.call('HLEN', records)
    if known == 0 and held > 0 then
      -- First seen by this version of the library (or emptied by it): kept from the map as it is.
      for _, key in ipairs(redis.call('HKEYS', records)) do redis.call('SADD', listed, key) end
    elseif known ~= held then
      local at, gone = now_ms(), 0
      for _, key in ipairs(redis.call('SMEMBERS', listed)) do
        if redis.call('HEXISTS', records, key) == 0 then
          gone = gone + 1
          local before = tonumber(redis.call('HGET', T .. ':lost:' .. map, key) or '0')
          if before < at then redis.call('HSET', T .. ':lost:' .. map, key, at) end
          redis.call('SREM', listed, key)
          redis.call('ZREM', T .. ':ttl:' .. map, key)
          tell(map, key, false)
        end
      end
      -- Records written from outside are kept too, so the next call compares counts again.
      if held > known - gone then
        for _, key in ipairs(redis.call('HKEYS', records)) do redis.call('SADD', listed, key) end
      end
      if gone > 0 then bump() end
    end
  end
end
`;

/** One script: its name (an ioredis command) and its body after the prelude; ARGV[4..] are its own. */
export interface Script {
  readonly name: string;
  readonly body: string;
  /** It writes what a decision rests on (a grant, a claim, a counter): `minReplicas` waits for it to be replicated. */
  readonly writes: boolean;
}

/** A script named `name` (unique among every script a client runs) whose body runs after the prelude. */
export const script = (name: string, body: string, writes = false): Script => ({ name, body, writes });

/**
 * Declares a store that has never been used new (KEYS[1] = `T`, ARGV[1] = a new incarnation id): its incarnation is
 * written without a loss, so its first permits need no recovery wait. Answers 1, or 0 when it has one already (in
 * use, or lost and found since). Runs without the prelude: the prelude would count the missing incarnation as a loss.
 */
export const DECLARE_FRESH = `
local T = KEYS[1]
if redis.call('GET', T .. ':inc') then return 0 end
redis.call('SET', T .. ':inc', ARGV[1])
redis.call('SET', T .. ':lost_inc', ARGV[1])
redis.call('SET', T .. ':replid', string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)'))
redis.call('SET', T .. ':runid', string.match(redis.call('INFO', 'server'), 'run_id:(%w+)'))
return 1
`;

/** A script's whole Lua source. */
export function luaOf(s: Script): string {
  return `${PRELUDE}\n${s.body}`;
}
