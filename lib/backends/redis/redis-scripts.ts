/*
 * The Redis backend's Lua scripts over record maps and counters: every call the backend makes is one of them (one
 * round trip, atomic on the server), each run after the prelude (`redis-script-prelude.ts`: the keys, the check of
 * the store's incarnation, the shared helpers).
 */
import { script } from './redis-script-prelude';

/** The scripts, by what they do. ARGV from 4 on, as listed per script. */
export const SCRIPTS = {
  /** The check alone (the feed's check of itself, the open). */
  check: script('gkCheck', 'return answer(false)'),
  /**
   * ARGV: payload → publishes it on the changes channel, after the prelude's checks (the feed's check of itself);
   * answers the server's clock in ms (the nodes' counts of it take it as a reading).
   */
  probe: script('gkProbe', `
redis.call('PUBLISH', T .. ':changes', ARGV[4])
return answer(now_ms())`),
  /** ARGV: map, key → the value or false. */
  get: script('gkGet', `
local map, key = ARGV[4], ARGV[5]
local v = redis.call('HGET', T .. ':m:' .. map, key)
if v and not live(map, key, now_ms()) then v = false end
return answer(v)`),
  /** ARGV: map, keys... → { key, value, key, value, ... } of those live. */
  getMany: script('gkGetMany', `
local map, now, out = ARGV[4], now_ms(), {}
for i = 5, #ARGV do
  local v = redis.call('HGET', T .. ':m:' .. map, ARGV[i])
  if v and live(map, ARGV[i], now) then out[#out + 1] = ARGV[i]; out[#out + 1] = v end
end
return answer(out)`),
  /** ARGV: map → { key, value, ... } of every live record. */
  list: script('gkList', `
local map, now, out = ARGV[4], now_ms(), {}
local expired = {}
for _, key in ipairs(redis.call('ZRANGEBYSCORE', T .. ':ttl:' .. map, '-inf', now)) do expired[key] = true end
local all = redis.call('HGETALL', T .. ':m:' .. map)
for i = 1, #all, 2 do
  if not expired[all[i]] then out[#out + 1] = all[i]; out[#out + 1] = all[i + 1] end
end
return answer(out)`),
  /** ARGV: map, key, value, ttl ms or '' → 1 if created (no live record was there), else 0. */
  create: script('gkCreate', `
local map, key, value, ttl, now = ARGV[4], ARGV[5], ARGV[6], ARGV[7], now_ms()
if redis.call('HEXISTS', T .. ':m:' .. map, key) == 1 and live(map, key, now) then return answer(0) end
write(map, key, value, ttl, now)
return answer(1)`, true),
  /**
   * ARGV: map, key, expected, value, ttl ms or '', not before (epoch ms) or '', `id` or '' → 1 if the live record held
   * exactly `expected` and the server's clock reached `not before`, and it was replaced. With `id`, `expected` is the
   * write id a value opens with (see `leadingWriteId`): held exactly when the stored value opens with that id.
   */
  replace: script('gkReplace', `
local map, key, expected, value, ttl, notBefore, now = ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], now_ms()
local stored = redis.call('HGET', T .. ':m:' .. map, key)
local held
if ARGV[10] == 'id' then
  held = stored and string.match(stored, '^{"v":%d+,"revision":%d+,"writeId":"([%w._:-]+)"') == expected
else
  held = stored == expected
end
if not held or not live(map, key, now) then return answer(0) end
if notBefore ~= '' and now < tonumber(notBefore) then return answer(0) end
redis.call('HSET', T .. ':m:' .. map, key, value)
expiry(map, key, ttl, now)
bump()
tell(map, key, value)
return answer(1)`, true),
  /** ARGV: map, key, expected → 1 if the live record held exactly `expected` and was removed. */
  remove: script('gkRemove', `
local map, key, expected = ARGV[4], ARGV[5], ARGV[6]
if redis.call('HGET', T .. ':m:' .. map, key) ~= expected or not live(map, key, now_ms()) then return answer(0) end
drop(map, key)
bump()
tell(map, key, false)
return answer(1)`, true),
  /** ARGV: map, key, value, ttl ms or '' → writes whatever was there. */
  put: script('gkPut', `
local map, key, value, ttl, now = ARGV[4], ARGV[5], ARGV[6], ARGV[7], now_ms()
write(map, key, value, ttl, now)
return answer(1)`, true),
  /** ARGV: map, key → removes whatever was there. */
  delete: script('gkDelete', `
local map, key = ARGV[4], ARGV[5]
local had = drop(map, key)
if had == 1 then
  bump()
  tell(map, key, false)
end
return answer(had)`, true),
  /** ARGV: map, key → when it was marked lost (ms) or false. */
  lostMark: script('gkLostMark', `
return answer(redis.call('HGET', T .. ':lost:' .. ARGV[4], ARGV[5]) or false)`),
  /** ARGV: map, key → the value a loss dropped under it, or false. */
  lostValue: script('gkLostValue', `
return answer(redis.call('HGET', T .. ':lostv:' .. ARGV[4], ARGV[5]) or false)`),
  /** ARGV: map, key → marks it lost since now on the server's clock (which times permits), or since when it was marked already if later. */
  markLost: script('gkMarkLost', `
local map, key, at = ARGV[4], ARGV[5], now_ms()
local before = tonumber(redis.call('HGET', T .. ':lost:' .. map, key) or '0')
if before < at then redis.call('HSET', T .. ':lost:' .. map, key, at) end
bump()
return answer(1)`, true),
  /**
   * ARGV: counter, at least → its next value: one more than the last, at least `at least` (one more than this node
   * saw), and after a loss at least the time of the loss in microseconds.
   */
  next: script('gkNext', `
local name, at_least = ARGV[4], tonumber(ARGV[5])
local v = redis.call('HINCRBY', T .. ':counters', name, 1)
local lost_at = tonumber(redis.call('GET', T .. ':lost_at') or '0')
local floor = math.max(at_least, lost_at * 1000)
if v < floor then
  v = floor
  redis.call('HSET', T .. ':counters', name, string.format('%.0f', v))
end
bump()
return answer(string.format('%.0f', v))`, true),
  /** ARGV: counter → its last value, or false. */
  current: script('gkCurrent', `
return answer(redis.call('HGET', T .. ':counters', ARGV[4]) or false)`),
  /** ARGV: maps... → drops up to 1,000 records past their TTL per map, telling each removal; how many it dropped. */
  sweep: script('gkSweep', `
local dropped = 0
for i = 4, #ARGV do
  local map = ARGV[i]
  local gone = redis.call('ZRANGEBYSCORE', T .. ':ttl:' .. map, '-inf', now_ms(), 'LIMIT', 0, 1000)
  for _, key in ipairs(gone) do
    drop(map, key)
    tell(map, key, false)
  end
  dropped = dropped + #gone
end
if dropped > 0 then bump() end
return answer(dropped)`, true),
} as const;

/** The scripts' names. */
export type ScriptName = keyof typeof SCRIPTS;
