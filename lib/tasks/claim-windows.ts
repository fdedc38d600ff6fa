import type { TaskRecord } from './task';
import { compareReady } from './task-claim.rules';
import { pointOf, rankAt, rankCeiling, rankOf } from './task-rank.rules';

/**
 * Range questions about the pending tasks of one type that are due, by rank (see task-rank.rules.ts), answered where
 * the data is. `above` is exclusive (`undefined`: from the bottom of the type), `upTo` inclusive.
 */
export interface RankedSource {
  /** The tasks in the range. */
  fetch(type: string, above: string | undefined, upTo: string): Promise<TaskRecord[]>;
  /** How many tasks the range holds (nothing but the number travels). */
  count(type: string, above: string, upTo: string): Promise<number>;
  /** The lowest rank above `above` (from the bottom without it), or `undefined` when there is none. */
  lowestAbove(type: string, above: string | undefined): Promise<string | undefined>;
}

/** What a node learned of one type's ranks from its previous answers. */
interface Window {
  /** The top of the last window: the rank of the last task the node was given, or of the range it last read. */
  hi: string;
  /** Seq per task in the last range read (µs of submit time per task, for tasks a submitter sent in a row). */
  seqPerTask: number;
  /** The last search found nothing above `hi`: whatever is there now came since, so the next asks for it at once. */
  drained: boolean;
}

/** How far past `limit` a window may reach before it is cut down, as a factor: the answer stays about one batch. */
const SLACK = 2;
/** Windows a search reads past its first before it reads the rest of the type in one go (never met but in a pathological spread of seqs). */
const MAX_STEPS = 24;
/** The widest window in seqs (a finite one, so a window cut down always narrows). */
const MAX_SPAN = 2 ** 52;

/**
 * Finds the first `limit` due pending tasks of a type in claim order, reading about `limit` of them whatever the
 * backlog: every read is a window of ranks from the bottom of the type (nothing below is ever missed: a retry keeps
 * its seq, a higher priority sorts first) up to where about `limit` tasks stand, learned from the answers before.
 * Past the last window it reaches on by windows sized from the density of seqs seen, each counted before it is read
 * (cut down while it holds more than {@link SLACK} times what is missing), and jumps a gap (or into the next priority)
 * by asking for the lowest rank above. A node that knows nothing of a type (start-up) asks for its lowest rank first,
 * and so does one whose last search found nothing above its window (an idle node: two calls per scan, both cheap).
 */
export class ClaimWindows {
  private readonly windows = new Map<string, Window>();

  /**
   * The first `limit` due pending tasks of `type` in claim order (fewer only when that is all there is), with `base`:
   * the tasks the type's first window held, up to `base.hi`, when the caller already read it (see {@link firstWindow};
   * a search that ended since moved the window, and then it is read again).
   */
  async first(source: RankedSource, type: string, limit: number, base?: { hi: string; tasks: TaskRecord[] }): Promise<TaskRecord[]> {
    const known = this.windows.get(type);
    let hi = known?.hi;
    let seqPerTask = known?.seqPerTask ?? 1;
    let drained = known?.drained ?? false;
    if (hi === undefined) {
      hi = await source.lowestAbove(type, undefined);
      if (hi === undefined) return [];
    }
    const found = base?.hi === hi ? base.tasks : await source.fetch(type, undefined, hi);
    for (let step = 0; found.length < limit; step++) {
      if (step === MAX_STEPS) {
        found.push(...(await source.fetch(type, hi, rankCeiling(type))));
        break;
      }
      const need = limit - found.length;
      let span = Math.min(MAX_SPAN, Math.max(1, Math.ceil(seqPerTask * need * 1.25)));
      let from = pointOf(type, hi);
      let upTo = rankAt(type, { priority: from.priority, seq: from.seq + span });
      let count = drained ? 0 : await source.count(type, hi, upTo);
      drained = false;
      if (count === 0) {
        // A gap, or the end of this priority: start the next window at the next task there is. The members read the
        // rank of every task above to find it, so it is asked only once a window sized from the density came back
        // empty (and at start-up), never as a matter of course.
        const lowest = await source.lowestAbove(type, hi);
        if (lowest === undefined) {
          drained = true;
          break;
        }
        from = pointOf(type, lowest);
        upTo = rankAt(type, { priority: from.priority, seq: from.seq + span });
        count = await source.count(type, hi, upTo);
      }
      while (count > SLACK * need && span > 1) {
        span = Math.max(1, Math.floor(span * need / count));
        upTo = rankAt(type, { priority: from.priority, seq: from.seq + span });
        count = await source.count(type, hi, upTo);
      }
      const read = await source.fetch(type, hi, upTo);
      found.push(...read);
      hi = upTo;
      seqPerTask = Math.min(MAX_SPAN, read.length > 0 ? Math.max(1, span / read.length) : seqPerTask * 4);
    }
    found.sort(compareReady);
    // The next window ends at the last task this answer gives: it then holds what is still unclaimed of it, and what
    // came in below since.
    if (found.length >= limit) hi = rankOf(found[limit - 1]);
    this.windows.set(type, { hi, seqPerTask, drained: drained && found.length < limit });
    return found.slice(0, limit);
  }

  /** The top of the first window of `type`, when the node knows one: a caller may read it along with other questions. */
  firstWindow(type: string): string | undefined {
    return this.windows.get(type)?.hi;
  }

  /** Forgets what was learned (the node asks for the lowest rank again): after an answer that could not be trusted. */
  forget(type: string): void {
    this.windows.delete(type);
  }
}
