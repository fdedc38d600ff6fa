import type { JobHistory, SlotRange } from './job-history';
import type { SlotVerdict } from './job-view';

/*
 * The slot ledger: a verdict for every scheduled instant of a job, judged once for the cluster inside the compare-and-
 * set of its run history. Pure: the history writer applies it to what it read.
 *
 * An instant that a run started for ran (the run names it). Nodes note the instants they saw skipped on purpose
 * (paused, the overlap policy, no eligible node) and their writes carry the notes. Any write then judges every instant
 * old enough to be settled (`settledBefore`: a run that started for it would have been written by then) that has
 * neither: missed. The write that lands a verdict is the one that says it, so it is said once for the cluster, and
 * if the node judging dies before its write lands, the next write of any node judges the same instants.
 */

/** Ranges of verdicts kept per job, the newest. */
export const SLOTS_KEPT = 50;
/** Instants judged one by one in one write; a longer gap is judged as one range of missed instants. */
const JUDGED_ONE_BY_ONE = 1_000;
/** Missed instants a write names (the newest); more are counted. */
const NAMED_AT_MOST = 100;
/** Instants remembered ahead of the judged ones. */
const AHEAD_AT_MOST = 1_000;

/** A job's fire instants, as the ledger reads them. */
export interface SlotCalendar {
  /** The cron expression and its zone: a history judged by another is not judged by this one before now. */
  readonly expression?: string;
  readonly timeZone?: string;
  /** The next `count` fire instants after `from`. */
  next(from: number, count: number): number[];
  /** The fire instants strictly between `after` and `before`: how many (up to `cap`) and the newest. */
  firesBetween(after: number, before: number, cap?: number): { count: number; last?: number };
  /** A step every fire instant is a whole number of from every other: a run one step after a fire is the next fire. */
  readonly gridMs?: number;
}

/** What a write of the ledger says for the cluster. */
export interface SlotNews {
  /** Instants judged missed by this write: at most 100 by name (the newest; the oldest of a gap of over 1,000), and how many in all. */
  readonly missed?: { readonly instants: readonly number[]; readonly count: number };
  /** The job has had no eligible node since `since` (a new streak of `noEligibleNode`). */
  readonly noEligibleNode?: { readonly since: number };
}

/**
 * `next` (the history a write is about to store, its runs and notes already merged from `base`) with every instant
 * before `settledBefore` judged, and what that says. `notes` are the skips this write carries; `node` names the judge.
 */
export function judgeSlots(
  base: JobHistory | undefined,
  next: JobHistory,
  notes: readonly SlotRange[],
  calendar: SlotCalendar,
  settledBefore: number,
  node: string,
): { history: JobHistory; news: SlotNews } {
  const slots = mergeSlots(next.slots ?? [], notes, calendar);
  const ran = new Set(next.ranAhead ?? []);
  for (const run of next.runs) if (run.instant !== undefined && run.trigger !== 'manual') ran.add(run.instant);
  let through = next.judgedThrough ?? startOfLedger(base, next, notes);
  if (through === undefined) return { history: next, news: {} };
  const schedule = calendar.expression === undefined ? undefined : `${calendar.expression} ${calendar.timeZone ?? ''}`.trim();
  if (schedule !== undefined && next.schedule !== undefined && next.schedule !== schedule) {
    // Its schedule changed (an edit, a deploy): the instants not judged yet may have been the old schedule's, which
    // this node cannot name. Judged from here on by the new one.
    through = Math.max(through, settledBefore - 1);
  }
  const missed: number[] = [];
  let missedCount = 0;
  const fires = settledFires(calendar, through, settledBefore, ran);
  if (fires.length > JUDGED_ONE_BY_ONE) {
    // A long gap (a cluster down for days): one range, counted, the runs in it left to the history's own record.
    const gap = calendar.firesBetween(through, settledBefore);
    if (gap.count > 0 && gap.last !== undefined) {
      addRange(slots, { verdict: 'missed', first: fires[0], last: gap.last, count: gap.count, node }, calendar);
      missedCount = gap.count;
      missed.push(...fires.slice(0, NAMED_AT_MOST));
    }
  } else {
    for (const at of fires) {
      if (ran.has(at) || covered(slots, at)) continue;
      addRange(slots, { verdict: 'missed', first: at, last: at, count: 1, node }, calendar);
      missedCount++;
      missed.push(at);
      if (missed.length > NAMED_AT_MOST) missed.shift();
    }
  }
  // Through the last fire judged (a fire, so the next write can step from it on the grid), or up to the settled.
  through = fires.length > 0 && fires.length <= JUDGED_ONE_BY_ONE ? Math.max(through, fires.at(-1)!) : Math.max(through, settledBefore - 1);
  const ahead = [...ran].filter((at) => at >= through).sort((a, b) => a - b).slice(-AHEAD_AT_MOST);
  const kept = slots.sort((a, b) => b.last - a.last).slice(0, SLOTS_KEPT);
  const lastMissed = missed.at(-1);
  const history: JobHistory = {
    ...next,
    ...(schedule !== undefined && { schedule }),
    slots: kept,
    judgedThrough: through,
    ranAhead: ahead,
    missed: missedCount === 0 ? next.missed : { count: next.missed.count + missedCount, last: Math.max(next.missed.last ?? -Infinity, lastMissed ?? -Infinity) },
  };
  const streak = newStreak(base?.slots ?? [], kept, notes);
  return {
    history,
    news: {
      ...(missedCount > 0 && { missed: { instants: missed, count: missedCount } }),
      ...(streak !== undefined && { noEligibleNode: { since: streak } }),
    },
  };
}

/**
 * The fire instants after `through` and before `settledBefore`, at most one more than are judged one by one. Where
 * `through` is a fire and the calendar has a grid, a run one step after a fire names the next fire with no cron
 * calculation (the usual case: every instant ran); the rest are listed by the calendar, a few at a time.
 */
function settledFires(calendar: SlotCalendar, through: number, settledBefore: number, ran: ReadonlySet<number>): number[] {
  const fires: number[] = [];
  // The next fire is after `through`: none is settled unless something after it is (a new job's first writes).
  if (through + 1 >= settledBefore) return fires;
  const grid = calendar.gridMs;
  let at = through;
  while (fires.length <= JUDGED_ONE_BY_ONE) {
    // From a fire, the next is at least a step later: none is settled when that step is not.
    const onFire = grid !== undefined && (fires.length > 0 || ran.has(at));
    if (onFire && at + grid >= settledBefore) break;
    if (onFire && ran.has(at + grid)) {
      fires.push((at += grid));
      continue;
    }
    const batch = calendar.next(at, 8);
    let more = batch.length === 8;
    for (const next of batch) {
      if (next >= settledBefore || fires.length > JUDGED_ONE_BY_ONE) {
        more = false;
        break;
      }
      fires.push((at = next));
    }
    if (!more) break;
  }
  return fires;
}

/**
 * Where a job's ledger begins, for a history that has none: just before its first instant this write knows of (an
 * older history: its newest started instant). A job new to the cluster is judged from its first run or note.
 */
function startOfLedger(base: JobHistory | undefined, next: JobHistory, notes: readonly SlotRange[]): number | undefined {
  if (base?.lastInstant !== undefined) return base.lastInstant;
  let first = Infinity;
  for (const run of next.runs) if (run.instant !== undefined && run.trigger !== 'manual') first = Math.min(first, run.instant);
  for (const note of notes) first = Math.min(first, note.first);
  return first === Infinity ? undefined : first - 1;
}

/** `slots` with `notes` added: ranges of one verdict that overlap or follow each other are one. */
export function mergeSlots(slots: readonly SlotRange[], notes: readonly SlotRange[], calendar: SlotCalendar): SlotRange[] {
  const merged = [...slots];
  for (const note of notes) addRange(merged, note, calendar);
  return merged;
}

/** Adds `range` to `slots` in place, joined with every range of its verdict it overlaps or follows. */
function addRange(slots: SlotRange[], range: SlotRange, calendar: SlotCalendar): void {
  let joined = range;
  for (let i = slots.length - 1; i >= 0; i--) {
    const other = slots[i];
    if (other.verdict !== joined.verdict || !touches(other, joined, calendar)) continue;
    const first = Math.min(other.first, joined.first);
    const last = Math.max(other.last, joined.last);
    joined = { verdict: joined.verdict, first, last, count: joinedCount(other, joined, calendar), node: other.first <= joined.first ? other.node : joined.node };
    slots.splice(i, 1);
  }
  slots.push(joined);
}

/**
 * How many instants two touching ranges of one verdict cover together, counting the calendar only where they overlap
 * in part (a node's next tick extends its range by one; another node's notes mostly lie within it).
 */
function joinedCount(a: SlotRange, b: SlotRange, calendar: SlotCalendar): number {
  if (a.first <= b.first && b.last <= a.last) return a.count;
  if (b.first <= a.first && a.last <= b.last) return b.count;
  const from = Math.max(a.first, b.first);
  const to = Math.min(a.last, b.last);
  return a.count + b.count - (from <= to ? calendar.firesBetween(from - 1, to + 1).count : 0);
}

/** Whether two ranges share an instant or one's last is the fire just before the other's first. */
function touches(a: SlotRange, b: SlotRange, calendar: SlotCalendar): boolean {
  if (a.first <= b.last && b.first <= a.last) return true;
  const [before, after] = a.last < b.first ? [a, b] : [b, a];
  return calendar.firesBetween(before.last, after.first, 1).count === 0;
}

/** Whether some range has `at`. */
function covered(slots: readonly SlotRange[], at: number): boolean {
  return slots.some((range) => range.first <= at && at <= range.last);
}

/**
 * The start of a streak of `noEligibleNode` this write's notes begin: a range of them that shares nothing with one
 * the history had (an earlier write said that one).
 */
function newStreak(before: readonly SlotRange[], after: readonly SlotRange[], notes: readonly SlotRange[]): number | undefined {
  const verdict: SlotVerdict = 'noEligibleNode';
  for (const range of after) {
    if (range.verdict !== verdict) continue;
    if (!notes.some((note) => note.verdict === verdict && range.first <= note.first && note.last <= range.last)) continue;
    if (before.some((old) => old.verdict === verdict && old.first <= range.last && range.first <= old.last)) continue;
    return range.first;
  }
  return undefined;
}
