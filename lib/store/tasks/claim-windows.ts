import type { TaskRecord } from './task';
import { compareReady } from './task-store.rules';
import { pointOf, rankAt, rankCeiling, rankFloor, rankOf } from './task-rank.rules';

/**
 * Range questions about the pending tasks of one type that are due, by rank (see task-rank.rules.ts), answered where
 * the data is. `above` is exclusive (`undefined`: from the bottom of the type), `upTo` inclusive.
 */
export interface RankedSource {
  /** The tasks in the range. */
  fetch(type: string, above: string | undefined, upTo: string): Promise<TaskRecord[]>;
  /** How many tasks the range holds, tasks not due yet included (nothing but the number travels). */
  count(type: string, above: string, upTo: string): Promise<number>;
  /** The lowest rank above `above` (from the bottom without it), or `undefined` when there is none. */
  lowestAbove(type: string, above: string | undefined): Promise<string | undefined>;
}

/** What a node learned of one type's ranks from its previous answers. */
interface Window {
  /** The top of the last window: the rank of the last task the node was given, or of the range it last read. */
  hi: string | undefined;
  /** Seq per task in the last range read (µs of submit time per task, for tasks a submitter sent in a row). */
  seqPerTask: number;
  /** The last search read everything there was: what stands above `hi` now came since (few, as a rule). */
  drained: boolean;
}

/** What a caller asks about a type along with its other questions, in one round (see {@link ClaimWindows.plan}). */
export interface WindowPlan {
  /** The top of the type's first window, when the node knows one: read the tasks from the bottom of the type up to it. */
  readonly hi: string | undefined;
  /** Count the tasks above `hi` (above the bottom without it). */
  readonly countRest: boolean;
}

/** The answers to a {@link WindowPlan}. */
export interface PlanAnswers {
  readonly plan: WindowPlan;
  readonly tasks?: TaskRecord[];
  readonly rest?: number;
}

/** How far past `limit` a window may reach before it is cut down, as a factor: the answer stays about one batch. */
const SLACK = 2;
/** Windows a search reads past its first before it reads the rest of the type in one go (never met but in a pathological spread of seqs). */
const MAX_STEPS = 24;
/** A window's width in seqs and the tasks it was counted to hold. */
interface Counted {
  readonly span: number;
  readonly count: number;
}

/** The fewest tasks a window may hold before it is narrowed: a search that misses a few is not cut down to a seq at a time. */
const MIN_ROOM = 64;
/** Times an empty window is widened (fourfold each: what a widened window holds past the gap is at most three times what it was sized for, at the density seen) before the search asks for the lowest rank above. */
const WIDENINGS = 6;
/** The widest window in seqs (a finite one, so a window cut down always narrows). */
const MAX_SPAN = 2 ** 52;

/**
 * Finds the first `limit` due pending tasks of a type in claim order, reading about `limit` of them whatever the
 * backlog: every read is a window of ranks from the bottom of the type (nothing below is ever missed: a retry keeps
 * its seq, a higher priority sorts first) up to where about `limit` tasks stand, learned from the answers before.
 * A type the node knows nothing of, or whose last search read everything there was, has what stands above counted
 * first and, when that is within a batch, read whole (an idle or lightly loaded type: one round). Otherwise the
 * search reaches on by windows sized from the density of seqs it read, each counted before it is read (narrowed by
 * bisection while it holds more than {@link SLACK} times what is missing, so no count costs the members much more than
 * the window it started from), and jumps a gap (or into the next priority) by asking for the
 * lowest rank above, which the members answer by reading every rank above: only when a counted window came back
 * empty, or at the first search of a backlog.
 */
export class ClaimWindows {
  private readonly windows = new Map<string, Window>();

  /** What to ask about `type` in the caller's first round (see {@link first}). */
  plan(type: string): WindowPlan {
    const known = this.windows.get(type);
    return { hi: known?.hi, countRest: !known || known.drained };
  }

  /**
   * The first `limit` due pending tasks of `type` in claim order (fewer only when that is all there is), from the
   * answers to {@link plan} when the caller has them (a search that ended since moved the window: then asked again).
   */
  async first(source: RankedSource, type: string, limit: number, answers?: PlanAnswers): Promise<TaskRecord[]> {
    const known = this.windows.get(type);
    const plan = this.plan(type);
    const fresh = answers !== undefined && answers.plan.hi === plan.hi && answers.plan.countRest === plan.countRest;
    let hi = plan.hi;
    let seqPerTask = known?.seqPerTask ?? 1;
    const found = hi === undefined ? [] : fresh && answers.tasks ? [...answers.tasks] : await source.fetch(type, undefined, hi);
    if (plan.countRest && found.length < limit) {
      const rest = fresh && answers.rest !== undefined ? answers.rest : await source.count(type, hi ?? rankFloor(type), rankCeiling(type));
      if (rest === 0) return this.keep(type, found, limit, { hi, seqPerTask, drained: true });
      if (rest <= SLACK * (limit - found.length)) {
        found.push(...(await source.fetch(type, hi, rankCeiling(type))));
        return this.keep(type, found, limit, { hi, seqPerTask, drained: true });
      }
      if (hi === undefined) {
        // A backlog the node knows nothing of: start at its lowest rank.
        hi = await source.lowestAbove(type, undefined);
        if (hi === undefined) return this.keep(type, found, limit, { hi, seqPerTask, drained: true });
        found.push(...(await source.fetch(type, undefined, hi)));
      }
    }
    let drained = false;
    // Seqs and tasks read by this search's windows: the density that sizes the next one.
    let spanRead = 0;
    let tasksRead = 0;
    for (let step = 0; found.length < limit && hi !== undefined; step++) {
      if (step === MAX_STEPS) {
        found.push(...(await source.fetch(type, hi, rankCeiling(type))));
        drained = true;
        break;
      }
      const need = limit - found.length;
      const room = Math.max(SLACK * need, MIN_ROOM);
      let span = Math.min(MAX_SPAN, Math.max(1, Math.ceil(seqPerTask * need * 1.25)));
      let from = pointOf(type, hi);
      const upTo = (width: number) => rankAt(type, { priority: from.priority, seq: from.seq + width });
      let count = await source.count(type, hi, upTo(span));
      // A window that holds less than half of what is missing (most often none: a gap between bursts, as a
      // submitter's seqs bunch at each millisecond) is widened a few times, each count answered from the index alone,
      // before it is read or, still empty, the question that reads every task above is asked.
      let below = { span: 0, count: 0 };
      for (let widen = 0; 2 * count < need && widen < WIDENINGS && span < MAX_SPAN; widen++) {
        below = { span, count };
        span = Math.min(MAX_SPAN, span * 4);
        count = await source.count(type, hi, upTo(span));
      }
      if (count > room) {
        ({ span, count } = await this.narrow(source, type, hi, upTo, need, room, below, { span, count }));
      }
      if (count === 0) {
        // A gap, or the end of this priority: start the next window at the next task there is.
        const lowest = await source.lowestAbove(type, hi);
        if (lowest === undefined) {
          drained = true;
          break;
        }
        from = pointOf(type, lowest);
        count = await source.count(type, hi, upTo(span));
        if (count > room) ({ span, count } = await this.narrow(source, type, hi, upTo, need, room, { span: 0, count: 0 }, { span, count }));
      }
      const read = await source.fetch(type, hi, upTo(span));
      found.push(...read);
      hi = upTo(span);
      // The density over everything this search read sizes the next window (one window of a few tasks says little:
      // sized from it alone, the next could span the backlog), growing at most fourfold a step; an empty read says
      // nothing of it (it was a gap).
      spanRead += span;
      tasksRead += read.length;
      if (tasksRead > 0) seqPerTask = Math.min(MAX_SPAN, seqPerTask * 4, Math.max(1, spanRead / tasksRead));
    }
    return this.keep(type, found, limit, { hi, seqPerTask, drained });
  }

  /**
   * A window (above `hi`, up to `upTo(span)`) holding at most `room` tasks, and at least half of `need` when one
   * does (the next step reads on for the rest), between `below` (a window known to hold no more than `room`, or none)
   * and `above` (one that holds more): bisected between the
   * widest window known to hold no more than `room` and the narrowest known to hold more, the first probe placed where
   * `need` would end at the density counted (between a sixteenth and half of the window). A count costs the members
   * what its range holds, so every probe costs less than the one that started the narrowing. Cutting a window in
   * proportion to its count instead could land in a gap between bunches of seqs, read nothing, and widen from there
   * without bound.
   */
  private async narrow(source: RankedSource, type: string, hi: string, upTo: (span: number) => string, need: number, room: number, below: Counted, above: Counted): Promise<Counted> {
    let { span: lo, count: loCount } = below;
    let { span: over, count: overCount } = above;
    for (let probe = 0; over - lo > 1 && 2 * loCount < need; probe++) {
      const share = probe === 0 ? Math.min(0.5, Math.max(1 / 16, (need * 1.25) / overCount)) : 0.5;
      const mid = lo + Math.max(1, Math.floor((over - lo) * share));
      const midCount = await source.count(type, hi, upTo(mid));
      if (midCount > room) {
        over = mid;
        overCount = midCount;
      } else {
        lo = mid;
        loCount = midCount;
      }
    }
    // Nothing narrower than one seq: its tasks share a rank and are read together.
    return loCount > 0 ? { span: lo, count: loCount } : { span: over, count: overCount };
  }

  /**
   * Answers the first `limit` of `found` in claim order, and remembers where the next search starts: at the last task
   * this answer gives when it is full (the window then holds what is still unclaimed of it, and what came in below
   * since), else above everything read.
   */
  private keep(type: string, found: TaskRecord[], limit: number, window: Window): TaskRecord[] {
    found.sort(compareReady);
    if (found.length >= limit) {
      this.windows.set(type, { ...window, hi: rankOf(found[limit - 1]), drained: false });
      return found.slice(0, limit);
    }
    const last = found.length > 0 ? rankOf(found[found.length - 1]) : undefined;
    const hi = last === undefined || (window.hi !== undefined && window.hi > last) ? window.hi : last;
    this.windows.set(type, { ...window, hi });
    return found;
  }
}
