import { CorruptStateError } from '../../core/errors/corrupt-state.error';
import { parseJsonObject } from '../../core/json-object';
import { FINISHED_STATES, type TaskGroupRecord, type TaskRecord, type TaskState } from './task';
import { storedRankOf } from './task-rank.rules';

/*
 * The stored form of tasks and groups: JSON written by this library (`v` is the format). Compare-and-set compares
 * the exact stored value, so writers pass back the string they read.
 *
 * A pending task also carries `rank`, its place in claim order or, while it waits, when it comes due (see
 * task-rank.rules.ts), for the members' sorted index; it is storage only: decoding drops it, encoding derives it.
 * The format number stays 1 because the previous version reads these records as they are (it keeps a field it does
 * not know) and writes records without `rank`, or backing off with their place in claim order, which the store still
 * finds (see `HazelcastClaimQueries.claimable`).
 */
const FORMAT = 1;
const STATES = new Set<TaskState>(['pending', 'running', ...FINISHED_STATES]);

/**
 * The stored object each decoded task came from. A compare-and-set must send back the exact stored bytes, and a
 * record the previous version wrote (no `rank`, or one it carried over into a state that has none) is not what
 * encoding the decoded task afresh would give; its own object, stringified, is (see `objectOf` in the store).
 * Decoded tasks are never changed in place (they are read-only), so the object stays true to them.
 */
const storedForm = new WeakMap<TaskRecord, Record<string, unknown>>();

/**
 * Each task's encoding once made: a task is encoded several times over (its claim's compare-and-set, then the value
 * the run's next write compares with), and tasks are never changed in place, so the text stays true to it.
 */
const encoded = new WeakMap<TaskRecord, string>();

/**
 * How the encoding of a task submitted afresh and never claimed begins: `v`, `state`, `epoch` and `attempts`, in this
 * order, before any field a caller chose. A store that claims natively (the Redis store's reserve script) recognises
 * such a task by this text alone and writes its claim by splicing, never re-encoding what the caller gave.
 */
export const CLAIM_HEAD = `{"v":${FORMAT},"state":"pending","epoch":0,"attempts":[],`;

/** Encodes a task: as it was stored if it is one this process decoded, else afresh (with its rank while pending). */
export function encodeTask(task: TaskRecord): string {
  let text = encoded.get(task);
  if (text !== undefined) return text;
  const stored = storedForm.get(task);
  // What a claim changes first, in this order (`CLAIM_HEAD`), so a store may claim a fresh task without parsing it.
  // Assigned onto the head (which keeps its keys' places): spreading both into a new object costs V8 about four
  // times as much.
  if (stored) text = JSON.stringify(stored);
  else {
    const fields: Record<string, unknown> = Object.assign({ v: FORMAT, state: task.state, epoch: task.epoch, attempts: task.attempts } as Record<string, unknown>, task);
    if (task.state === 'pending') fields.rank = storedRankOf(task);
    text = JSON.stringify(fields);
  }
  encoded.set(task, text);
  return text;
}

/** The two ends of a task's stored text, around what a write keeps as it is (see `TaskStore.replaceEnds`). */
export interface TextEnds {
  readonly head: string;
  readonly tail: string;
}

/** The fields a finish changes (or adds, or drops): every other one of the finished task is the very one read. */
const FINISH_CHANGES = new Set(['state', 'attempts', 'claim', 'result', 'finishedAt']);

/**
 * A run's finish as `done`, written by its ends (see `TaskStore.replaceEnds`): `next` is `read.task` done, with every
 * other field the very value read (as `decideFinish` makes it, for a task in no group). The read text begins with the
 * state, epoch and attempts (`CLAIM_HEAD`'s order) and ends with the claim; the finished text begins with the same
 * fields done and ends with the result and the finish time, and what lies between (the caller's data, the task's
 * place) stays as stored, never encoded again. The ends name the claim whole (its epoch, unique to it, and its expiry,
 * which each renewal moves), so they hold exactly while the claim is the one this run holds, as a whole-text compare
 * would; and no other writer changes a running task's other fields. Answers the ends to compare and to write, and
 * makes the finished text `next`'s encoding; `undefined` when the finish is not such a one (then compare the whole).
 */
export function finishEnds(read: { readonly task: TaskRecord | undefined; readonly raw: string | null }, next: TaskRecord | null): { expected: TextEnds; next: TextEnds } | undefined {
  const task = read.task;
  const raw = read.raw;
  if (!next || !task || raw === null || task.state !== 'running' || next.state !== 'done' || !task.claim || next.claim !== undefined) return undefined;
  if (task.result !== undefined || task.finishedAt !== undefined || !Number.isFinite(next.finishedAt)) return undefined;
  const fields = next as unknown as Record<string, unknown>;
  const before = task as unknown as Record<string, unknown>;
  let kept = 0;
  for (const key in fields) {
    if (FINISH_CHANGES.has(key)) continue;
    if (fields[key] !== before[key]) return undefined;
    kept++;
  }
  for (const key in before) if (!FINISH_CHANGES.has(key)) kept--;
  const result = JSON.stringify(next.result);
  if (kept !== 0 || result === undefined) return undefined;
  const head = `{"v":${FORMAT},"state":"running","epoch":${task.epoch},"attempts":${JSON.stringify(task.attempts)},`;
  const tail = `,"claim":${JSON.stringify(task.claim)}}`;
  if (raw.length <= head.length + tail.length || !raw.startsWith(head) || !raw.endsWith(tail)) return undefined;
  const ends = { head: `{"v":${FORMAT},"state":"done","epoch":${task.epoch},"attempts":${JSON.stringify(next.attempts)},`, tail: `,"result":${result},"finishedAt":${JSON.stringify(next.finishedAt)}}` };
  encoded.set(next, ends.head + raw.slice(head.length, raw.length - tail.length) + ends.tail);
  return { expected: { head, tail }, next: ends };
}

/** Decodes a task, throwing {@link CorruptStateError} naming `key` for anything this library did not write. */
export function decodeTask(key: string, raw: string): TaskRecord {
  const task = checkedTask(key, parseJsonObject(key, raw));
  // The text it was read from is its stored form exactly: what a compare-and-set against it sends back (so its
  // parsed object need not be kept as well: one entry per task decoded, not two).
  encoded.set(task, raw);
  return task;
}

/**
 * Decodes a task from its stored JSON already parsed (a client that parses JSON values hands them over so): checked
 * field by field, never turned back into text and parsed again.
 */
export function decodeTaskObject(key: string, value: Record<string, unknown>): TaskRecord {
  const task = checkedTask(key, value);
  storedForm.set(task, value);
  return task;
}

/** The task `value` holds, checked field by field (see {@link decodeTask}). */
function checkedTask(key: string, value: Record<string, unknown>): TaskRecord {
  if (value.v !== FORMAT) throw new CorruptStateError(key, `unknown format ${JSON.stringify(value.v)}`);
  const ints = ['priority', 'seq', 'submittedAt', 'notBefore', 'epoch'].every((f) => Number.isFinite(value[f]));
  if (value.maxAttempts !== undefined && !Number.isSafeInteger(value.maxAttempts)) throw new CorruptStateError(key, 'maxAttempts is not a whole number');
  if (value.id !== key || typeof value.type !== 'string' || !STATES.has(value.state as TaskState) || !ints || !Array.isArray(value.attempts)) {
    throw new CorruptStateError(key, 'not a task record (id, type, state, priority, seq, notBefore, maxAttempts, epoch, attempts)');
  }
  const { v: _v, rank: _rank, ...fields } = value;
  return fields as unknown as TaskRecord;
}

/** Encodes a group's record. */
export function encodeGroup(group: TaskGroupRecord): string {
  return JSON.stringify({ v: FORMAT, ...group });
}

/** Decodes a group's record. */
export function decodeGroup(key: string, raw: string): TaskGroupRecord {
  const value = parse(key, raw);
  if (value.id !== key || typeof value.type !== 'string' || typeof value.name !== 'string' || value.finished === null || typeof value.finished !== 'object') {
    throw new CorruptStateError(key, 'not a task group record (id, type, name, finished)');
  }
  const { v: _v, ...group } = value;
  return group as unknown as TaskGroupRecord;
}

function parse(key: string, raw: string): Record<string, unknown> {
  const value = parseJsonObject(key, raw);
  if (value.v !== FORMAT) throw new CorruptStateError(key, `unknown format ${JSON.stringify(value.v)}`);
  return value;
}
