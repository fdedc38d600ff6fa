import { script } from '../redis-script-prelude';

/*
 * The Redis task store's scripts (see `RedisTaskStore`), run as the backend's own are (`RedisCalls.run`: the same
 * prelude first, which checks the store's incarnation, then the body). ARGV[4] is the tasks' record map (`tasks`):
 * the tasks stay in its hash `T:m:<map>`, so the record map's reads and its change feed serve them as any map's; every
 * write of a task runs here, and keeps beside the hash, in the same script, the indexes the queries read:
 *
 * - `T:tp:<type>` (sorted set, every score 0, so in member order): the type's pending tasks in claim order. A member
 *   is the task's place, 32 hex digits (the priority negated, then the seq, each as 16 hex digits that sort as the
 *   number does: `rankOf` of task-rank.rules.ts without the type), then its id; byte order is claim order.
 * - `T:tw:<type>` (sorted set by `notBefore`): pending tasks that wait (a retry backing off, a hand-back, a submit
 *   held by its group: `notBefore` past both their submit and the server's clock when written), members as above. A
 *   claim query moves those due by its clock into `T:tp:<type>`: no query steps over tasks that wait.
 * - `T:tr:<type>` (sorted set by the claim's `expiresAt`): running tasks, members as above.
 * - `T:tu:<type>` (sorted set, scores 0): tasks marked `uncounted`, members as above.
 * - `T:tf` (sorted set by `finishedAt`, members the ids): finished tasks a purge may take: counted, and not a parent
 *   whose sub-groups' joins it still waits for (`awaitsJoins`).
 *
 * - `T:ix:<map>` (hash: key → the value's length in bytes, `|`, its line): what each task is indexed by, as its writer
 *   computed it from the task it encoded (`taskIndexLine`): its place, state, times, marks and type, read with one
 *   pattern. A write neither decodes the value it writes nor the one it replaces: the line that came with that one
 *   tells which entries to take out, unless its length is not the value's (a write that kept no line replaced it).
 *
 * A value written without a line (another writer's, the previous format, a test's plant: `p`ut) is indexed from the
 * value itself, parsed with `cjson`, and so is one with none beside it when it is replaced. A value that cannot be
 * parsed is indexed nowhere (the record map's reads still report it).
 */

/** Most waiting tasks one claim query moves into claim order per type (the rest, the next query). */
export const MOST_PROMOTED = 1_000;
/** Most lapsed claims of a type one claim query reads (in claim order among them once read). */
export const MOST_LAPSED = 1_000;

/** Helpers every task script shares, after the prelude. */
const TASK_LIB = `
local MAP = ARGV[4]
local MOST_PROMOTED, MOST_LAPSED = ${MOST_PROMOTED}, ${MOST_LAPSED}
local TASKS = T .. ':m:' .. MAP
local LINES = T .. ':ix:' .. MAP
local FINISHED = { done = true, failed = true, invalid = true, cancelled = true }
local HEX8 = '%02x%02x%02x%02x%02x%02x%02x%02x'
local function num(x)
  return type(x) == 'number' and x == x and x ~= math.huge and x ~= -math.huge
end
-- 16 hex digits that sort as the number does: its IEEE bytes, the sign bit flipped (every bit, for a negative).
local function sortable(x)
  if x == 0 then x = 0 end
  local b1, b2, b3, b4, b5, b6, b7, b8 = string.byte(struct.pack('>d', x), 1, 8)
  if b1 >= 128 then
    return string.format(HEX8, 255 - b1, 255 - b2, 255 - b3, 255 - b4, 255 - b5, 255 - b6, 255 - b7, 255 - b8)
  end
  return string.format(HEX8, b1 + 128, b2, b3, b4, b5, b6, b7, b8)
end
local function decoded(raw)
  if not raw then return nil end
  local ok, v = pcall(cjson.decode, raw)
  if ok and type(v) == 'table' then return v end
  return nil
end
local function awaits_joins(v)
  local s = v.subgroups
  return type(s) == 'table' and type(s.submitted) == 'table' and #s.submitted > 0 and s.joinSubmittedAt == nil
end
-- What a task is indexed by ({ place, state, type, notBefore, submittedAt, expiresAt, uncounted, finishedAt, awaits },
-- the times nil when absent): from the line its writer sent (see taskIndexLine), else nil.
local function from_line(line)
  if not line or line == '' then return nil end
  local place, state, nb, sub, exp, unc, fin, aw, ty = string.match(line, '^(%x+)|(%a*)|([^|]*)|([^|]*)|([^|]*)|([01])|([^|]*)|([01])|(.*)$')
  if not place then return nil end
  return { place = place, state = state, type = ty, notBefore = tonumber(nb), submittedAt = tonumber(sub), expiresAt = tonumber(exp),
    uncounted = unc == '1', finishedAt = tonumber(fin), awaits = aw == '1' }
end
-- What the stored value raw is indexed by, from the line stored beside it ('<its bytes>|<line>'), else nil: a line
-- stored for a value of another length was left by a write that did not keep lines (an older version's), not trusted.
local function from_stored_line(stored, raw)
  if not stored then return nil end
  local bytes, line = string.match(stored, '^(%d+)|(.*)$')
  if not bytes or tonumber(bytes) ~= #raw then return nil end
  return from_line(line)
end
-- The same from a stored value, parsed (a value written without a line), else nil.
local function from_value(raw)
  local v = decoded(raw)
  if not v or type(v.type) ~= 'string' or not num(v.priority) or not num(v.seq) then return nil end
  local claim = type(v.claim) == 'table' and num(v.claim.expiresAt) and v.claim.expiresAt or nil
  return { place = sortable(-v.priority) .. sortable(v.seq), state = v.state, type = v.type,
    notBefore = num(v.notBefore) and v.notBefore or nil, submittedAt = num(v.submittedAt) and v.submittedAt or nil, expiresAt = claim,
    uncounted = v.uncounted == true, finishedAt = num(v.finishedAt) and v.finishedAt or nil, awaits = awaits_joins(v) }
end
-- Whether pending task f waits (a retry backing off, a hand-back, a submit held by its group) at the server's now.
local function waits(f, now)
  return f.notBefore ~= nil and f.submittedAt ~= nil and f.notBefore > f.submittedAt and f.notBefore > now
end
-- The index entries { zset, score, member } of task key indexed by f; removing, a pending task's in all its sets.
local function entries(key, f, now, removing)
  local out = {}
  if not f then return out end
  local member = f.place .. key
  local ty = f.type
  if f.state == 'pending' then
    local later = waits(f, now)
    if removing or later then out[#out + 1] = { T .. ':tw:' .. ty, f.notBefore or 0, member } end
    if removing or not later then out[#out + 1] = { T .. ':tp:' .. ty, 0, member } end
    if removing then out[#out + 1] = { T .. ':tx:' .. ty, 0, member } end
  elseif f.state == 'running' and f.expiresAt then
    out[#out + 1] = { T .. ':tr:' .. ty, f.expiresAt, member }
  end
  if f.uncounted then out[#out + 1] = { T .. ':tu:' .. ty, 0, member } end
  if FINISHED[f.state] and f.finishedAt and not f.uncounted and not f.awaits then
    out[#out + 1] = { T .. ':tf', f.finishedAt, key }
  end
  return out
end
local function reindex(key, old, new, now)
  local added = entries(key, new, now, false)
  local kept = {}
  for _, e in ipairs(added) do kept[e[1] .. '\\0' .. e[3]] = true end
  for _, e in ipairs(entries(key, old, now, true)) do
    if not kept[e[1] .. '\\0' .. e[3]] then redis.call('ZREM', e[1], e[3]) end
  end
  for _, e in ipairs(added) do redis.call('ZADD', e[1], e[2], e[3]) end
end
-- The values of the first limit of the sorted members (place then id), as { key, value, ... }.
local function values_of(members, limit)
  table.sort(members)
  local out = {}
  for i = 1, math.min(limit, #members) do
    local key = string.sub(members[i], 33)
    local v = redis.call('HGET', TASKS, key)
    if v then out[#out + 1] = key; out[#out + 1] = v end
  end
  return out
end
-- Moves into claim order (T:tp:<ty>) the members of zset from whose score is at most upTo: waiting tasks now due,
-- reservations run out. Answers how many it moved.
local function promote(from, upTo, tp)
  local due = redis.call('ZRANGEBYSCORE', from, '-inf', upTo, 'LIMIT', 0, MOST_PROMOTED)
  if #due > 0 then
    for _, m in ipairs(due) do redis.call('ZADD', tp, 0, m) end
    redis.call('ZREM', from, unpack(due))
  end
  return #due
end
-- ARGV[first..last] (last: the end of ARGV without it), as a list: a script's types.
local function args(first, last)
  local out = {}
  for i = first, last or #ARGV do out[#out + 1] = ARGV[i] end
  return out
end
-- Per type of types: the waiting tasks due at now and the reservations run out by the server's clock moved into
-- claim order, then the first limit pending ones and the claims that expired before lapsed; and the index entries
-- read (moved, ranged over).
local function claimable_members(now, lapsed, limit, types)
  local members, examined, server = {}, 0, now_ms()
  for _, ty in ipairs(types) do
    local tp = T .. ':tp:' .. ty
    examined = examined + promote(T .. ':tw:' .. ty, now, tp) + promote(T .. ':tx:' .. ty, server, tp)
    for _, m in ipairs(redis.call('ZRANGE', tp, 0, limit - 1)) do members[#members + 1] = m end
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', T .. ':tr:' .. ty, '-inf', '(' .. lapsed, 'LIMIT', 0, MOST_LAPSED)) do members[#members + 1] = m end
  end
  return members, examined + #members
end
-- Tells one instance waiting for work of type ty (T:ti:<ty>, by when its wait ends: the longest waiting first) that
-- some came, on its own channel; one whose wait ended, or no longer subscribed, is dropped and the next told.
local function wake(ty, now)
  local ti = T .. ':ti:' .. ty
  while true do
    local waiting = redis.call('ZPOPMIN', ti)
    if #waiting == 0 then return end
    if tonumber(waiting[2]) > now and redis.call('PUBLISH', T .. ':w:' .. waiting[1], ty) > 0 then return end
  end
end
-- Applies count writes from ARGV[first] on, 5 ARGV each (see the write script: mode, key, expected, next, line) at
-- the server's now: per write 1 if it landed, else 0, and whether any landed (the caller bumps the epoch once).
local function apply_writes(first, count, now)
  local out, landed = {}, false
  for i = first, first + 5 * (count - 1), 5 do
    local mode, key, expected, value, line = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    local old = redis.call('HGET', TASKS, key)
    local ok
    if mode == 'a' or mode == 'c' then ok = not old
    elseif mode == 'p' or mode == 'x' then ok = true
    elseif mode == 'e' then
      local cut = string.find(expected, '\\n', 1, true)
      local head, tail = string.sub(expected, 1, cut - 1), string.sub(expected, cut + 1)
      ok = old and #old > #head + #tail and string.sub(old, 1, #head) == head and string.sub(old, #old - #tail + 1) == tail
      if ok then
        local at = string.find(value, '\\n', 1, true)
        value = string.sub(value, 1, at - 1) .. string.sub(old, #head + 1, #old - #tail) .. string.sub(value, at + 1)
      end
    else ok = old == expected end
    if ok and mode ~= 'a' and (old or (mode ~= 'x' and mode ~= 'd')) then
      local old_line = old and redis.call('HGET', LINES, key)
      local was, is = old and (from_stored_line(old_line, old) or from_value(old)), nil
      if mode == 'd' or mode == 'x' then
        redis.call('HDEL', TASKS, key)
        if old_line then redis.call('HDEL', LINES, key) end
      else
        redis.call('HSET', TASKS, key, value)
        is = from_line(line)
        if is then redis.call('HSET', LINES, key, #value .. '|' .. line)
        else
          if old_line then redis.call('HDEL', LINES, key) end
          is = from_value(value)
        end
      end
      reindex(key, was, is, now)
      landed = true
      if is and is.state == 'pending' and not waits(is, now) then wake(is.type, now) end
    end
    out[#out + 1] = ok and 1 or 0
  end
  return out, landed
end
-- Per type of types: the first limit uncounted tasks.
local function uncounted_members(limit, types)
  local members = {}
  for _, ty in ipairs(types) do
    for _, m in ipairs(redis.call('ZRANGE', T .. ':tu:' .. ty, 0, limit - 1)) do members[#members + 1] = m end
  end
  return members
end
`;

/** The task store's scripts. ARGV from 5 on, as listed per script. */
export const TASK_SCRIPTS = {
  /**
   * ARGV: then per write `mode, key, expected, next, line` → per write 1 if it landed, else 0. `line`: what `next` is
   * indexed by (`taskIndexLine`), or '' to index it from its value. Modes: `c` creates (no record there), `r`
   * replaces and `d` removes (the record holds exactly `expected`), `e` replaces the ends (`expected` and `next` are
   * each a head and a tail joined by a newline, which JSON text never holds raw: the record begins and ends with
   * `expected`'s, apart, and becomes `next`'s head, what lay between, then its tail: `TaskStore.replaceEnds`), `a`
   * writes nothing and lands if there is no record, `p` stores and `x` removes whatever is there (values another
   * writer stored). Each write lands or not on
   * its own and keeps the indexes; a task that became pending and is due wakes one instance waiting for work of its
   * type (`wake`), and nothing else is published; the epoch is bumped once if any landed.
   */
  write: script('gkTaskWrite', `${TASK_LIB}
local out, landed = apply_writes(5, (#ARGV - 4) / 5, now_ms())
if landed then bump() end
return answer(out)`, true),
  /**
   * ARGV: now, lapsed before, limit, types... → `{ { key, value, ... }, examined }`: per type the first `limit` due
   * pending tasks (the waiting ones due at `now` moved into claim order first) and up to {@link MOST_LAPSED} running
   * ones whose claim expired before `lapsed before`; of all, the first `limit` in claim order. `examined` counts the
   * index entries the script read (moved, ranged over), the cost of the query.
   */
  claimable: script('gkTaskClaimable', `${TASK_LIB}
local limit = tonumber(ARGV[7])
local members, examined = claimable_members(ARGV[5], ARGV[6], limit, args(8))
return answer({ values_of(members, limit), examined })`),
  /**
   * ARGV: now, lapsed before, count, hold ms, wait ms, uncounted limit, instance, n (the number of types), the n
   * types, then the claim (see `ReserveClaim`): '' to hold only; else the text a task never claimed begins with (the
   * codec's `CLAIM_HEAD`), the instance and the acquirer each as JSON text, `claimed at`, `epoch`, the epoch of an
   * earlier call whose answer was lost ('' if none) and per type the claim's `expires at` ('': not claimed), the
   * numbers as JSON text, spliced in as they are; then the number of writes that ride along and 5 ARGV each, as
   * `write` takes them, applied first (a node's completions and its next claims in one call) → `{ { key, value, ...
   * }, next due, { key, value, ... }, { key, value, ... }, landed }`: what `claimable` answers with `count` as its
   * limit; `landed`, per write that rode along, 1 if it landed.
   *
   * With a claim, each pending task of it that was never claimed (its text begins with that head: submitted afresh,
   * no attempt, epoch 0), is due at `claimed at` (on the caller's clock), waits for no cancelled run (`heldUntil`) and
   * is in no group that fails fast, is claimed here, as `decideClaim` claims it, and answered in the fourth list. The
   * others are answered in the first, each pending one reserved for `hold ms` (moved from `T:tp:<type>` to
   * `T:tx:<type>`, scored by when the hold ends on the server's clock: no other reserve or claim query answers it until
   * then, or until it is written) for the caller to claim by compare-and-set. What a lost call claimed and still holds
   * under its claim comes first in the fourth list (`T:rc:<instance>` keeps the keys the instance's last claiming call
   * claimed, for `hold ms`).
   *
   * With fewer than `count` in both, `instance` waits for work of every type for `wait ms` (`T:ti:<type>`, scored by
   * when the wait ends: the next task that becomes pending wakes the one waiting longest, see `wake`); with `count`,
   * it waits no more. `next due`: when the first waiting task of the types comes due (`false`: none waits). Third,
   * what `uncounted` answers with its limit (none with 0).
   */
  reserve: script('gkTaskReserve', `${TASK_LIB}
local count, hold, wait, most, instance = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11]
local n = tonumber(ARGV[12])
local types = args(13, 12 + n)
local HEAD = ARGV[13 + n]
local claiming = HEAD ~= ''
local who, by, at, at_ms, claim_epoch, again, expires = ARGV[14 + n], ARGV[15 + n], ARGV[16 + n], tonumber(ARGV[16 + n]), ARGV[17 + n], ARGV[18 + n], {}
if claiming then for i = 1, n do if ARGV[18 + n + i] ~= '' then expires[types[i]] = ARGV[18 + n + i] end end end
-- The writes that ride along (a node's completions, asked for in the same turn), applied first: after the claim's
-- arguments, their count, then 5 ARGV each as the write script takes them.
local ride = claiming and (19 + 2 * n) or (14 + n)
local wrote, wrote_any = apply_writes(ride + 1, tonumber(ARGV[ride] or '0'), now_ms())
-- What the instance's last call that claimed claimed ('<epoch>' then a key per line), kept for as long as a hold lasts.
local CLAIMED = T .. ':rc:' .. instance
local RUNNING = '{"v":1,"state":"running",'
-- The claimed text of a task never claimed (raw begins with HEAD), as decideClaim writes it, and its index line; nil
-- when it is not such a task, not due at the claim's time, or waits for something a claim by compare-and-set decides.
local function claimed(raw, line, ty)
  if string.sub(raw, 1, #HEAD) ~= HEAD or string.find(raw, '"heldUntil":', #HEAD, true) or string.find(raw, '"failGroupFast":true', #HEAD, true) then return nil end
  local place, nb, sub, rest = string.match(line or '', '^(%x+)|pending|([^|]*)|([^|]*)|[^|]*|(.*)$')
  if not place or tonumber(nb) == nil or tonumber(nb) > at_ms then return nil end
  local exp = expires[ty]
  local attempt = '{"attempt":1,"epoch":' .. claim_epoch .. ',"instance":' .. who .. ',"acquirer":' .. by .. ',"startedAt":' .. at .. '}'
  local claim = '{"instance":' .. who .. ',"acquirer":' .. by .. ',"epoch":' .. claim_epoch .. ',"claimedAt":' .. at .. ',"expiresAt":' .. exp .. '}'
  local text = '{"v":1,"state":"running","epoch":' .. claim_epoch .. ',"attempts":[' .. attempt .. '],'
    .. string.sub(raw, #HEAD + 1, -2) .. ',"claim":' .. claim .. '}'
  return text, place .. '|running|' .. nb .. '|' .. sub .. '|' .. exp .. '|' .. rest
end
local server, out, taken, won, won_keys = now_ms(), {}, 0, {}, {}
-- The answer of the call that claimed under epoch again was lost: what it claimed and is still held under its claim
-- is answered again (a call on this connection runs after any earlier one, so that call has run by now or never will).
if claiming and again ~= '' then
  local last = redis.call('GET', CLAIMED)
  if last and string.sub(last, 1, #again + 1) == again .. '\\n' then
    local mark = '"claim":{"instance":' .. who .. ',"acquirer":' .. by .. ',"epoch":' .. again .. ','
    for key in string.gmatch(string.sub(last, #again + 2), '[^\\n]+') do
      local v = redis.call('HGET', TASKS, key)
      if v and string.sub(v, 1, #RUNNING) == RUNNING and string.find(v, mark, #RUNNING, true) then
        won[#won + 1] = key; won[#won + 1] = v; taken = taken + 1
      end
    end
  end
end
local members = claimable_members(ARGV[5], ARGV[6], count - taken, types)
table.sort(members)
for i = 1, #members do
  if taken >= count then break end
  local m = members[i]
  local key = string.sub(m, 33)
  local v = redis.call('HGET', TASKS, key)
  if v then
    taken = taken + 1
    local stored = claiming and redis.call('HGET', LINES, key)
    local f = stored and from_stored_line(stored, v)
    local text, line = nil, nil
    if f and f.state == 'pending' and expires[f.type] then text, line = claimed(v, string.match(stored, '^%d+|(.*)$'), f.type) end
    if text then
      redis.call('HSET', TASKS, key, text)
      redis.call('HSET', LINES, key, #text .. '|' .. line)
      reindex(key, f, from_line(line), server)
      won[#won + 1] = key; won[#won + 1] = text; won_keys[#won_keys + 1] = key
    else
      out[#out + 1] = key; out[#out + 1] = v
      -- A pending one is in its type's claim order (a lapsed claim is in none): reserved there.
      for _, ty in ipairs(types) do
        if redis.call('ZREM', T .. ':tp:' .. ty, m) == 1 then
          redis.call('ZADD', T .. ':tx:' .. ty, server + hold, m)
          break
        end
      end
    end
  end
end
if #won_keys > 0 or wrote_any then bump() end
if #won_keys > 0 then redis.call('SET', CLAIMED, claim_epoch .. '\\n' .. table.concat(won_keys, '\\n'), 'PX', hold) end
local next_due = false
for _, ty in ipairs(types) do
  local ti = T .. ':ti:' .. ty
  if taken < count then redis.call('ZADD', ti, server + wait, instance) else redis.call('ZREM', ti, instance) end
  local first = redis.call('ZRANGE', T .. ':tw:' .. ty, 0, 0, 'WITHSCORES')
  if #first > 0 and (not next_due or tonumber(first[2]) < tonumber(next_due)) then next_due = first[2] end
end
local uncounted = {}
if most > 0 then uncounted = values_of(uncounted_members(most, types), most) end
return answer({ out, next_due, uncounted, won, wrote })`),
  /** ARGV: limit, types... → `{ key, value, ... }`: the first `limit` uncounted tasks of `types` in claim order. */
  uncounted: script('gkTaskUncounted', `${TASK_LIB}
local limit = tonumber(ARGV[5])
return answer(values_of(uncounted_members(limit, args(6)), limit))`),
  /**
   * ARGV: now, lapsed before, limit, uncounted limit, types... → `{ claimable, examined, uncounted }`: what
   * `claimable` and `uncounted` answer, in one call (a worker's periodic scan).
   */
  scan: script('gkTaskScan', `${TASK_LIB}
local limit, most = tonumber(ARGV[7]), tonumber(ARGV[8])
local types = args(9)
local members, examined = claimable_members(ARGV[5], ARGV[6], limit, types)
return answer({ values_of(members, limit), examined, values_of(uncounted_members(most, types), most) })`),
  /** ARGV: before, limit → `{ key, value, ... }`: up to `limit` purgeable tasks finished before `before`, earliest first. */
  finishedBefore: script('gkTaskFinishedBefore', `${TASK_LIB}
local out = {}
for _, key in ipairs(redis.call('ZRANGEBYSCORE', T .. ':tf', '-inf', '(' .. ARGV[5], 'LIMIT', 0, tonumber(ARGV[6]))) do
  local v = redis.call('HGET', TASKS, key)
  if v then out[#out + 1] = key; out[#out + 1] = v end
end
return answer(out)`),
} as const;
