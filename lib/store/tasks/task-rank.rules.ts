import type { TaskRecord } from './task';

/*
 * A pending task's place in claim order as one string (`rank`), stored beside the task so a sorted index on the
 * members can answer "the first tasks of a type in claim order" as a range: `<type>:` then the priority negated and
 * the seq, each as 16 hex digits that sort as the numbers do. A type never holds ':', so each type's ranks form one
 * range of their own and the range is the type filter too. Ties (same priority and seq) share a rank; the id breaks
 * them on the client, as `compareReady` does.
 */

/** A place in claim order: ranks sort by priority, highest first, then by seq. */
export interface RankPoint {
  readonly priority: number;
  readonly seq: number;
}

const view = new DataView(new ArrayBuffer(8));
const SIGN = 0x80000000;

/** 16 hex digits of a finite number, sorting as the numbers do (IEEE 754 bits, negatives flipped). */
function sortableHex(value: number): string {
  view.setFloat64(0, value === 0 ? 0 : value); // -0 and 0 are one place
  let high = view.getUint32(0);
  let low = view.getUint32(4);
  if (high & SIGN) {
    high = ~high >>> 0;
    low = ~low >>> 0;
  } else {
    high = (high | SIGN) >>> 0;
  }
  return high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0');
}

function fromSortableHex(hex: string): number {
  let high = parseInt(hex.slice(0, 8), 16);
  let low = parseInt(hex.slice(8, 16), 16);
  if (high & SIGN) {
    high = (high & ~SIGN) >>> 0;
  } else {
    high = ~high >>> 0;
    low = ~low >>> 0;
  }
  view.setUint32(0, high);
  view.setUint32(4, low);
  return view.getFloat64(0);
}

/** A place in claim order without the type: 32 hex digits that sort as claim order does (see {@link rankAt}). */
export function placeOf(point: RankPoint): string {
  return sortableHex(-point.priority) + sortableHex(point.seq);
}

/** The rank of `type` at `point`. */
export function rankAt(type: string, point: RankPoint): string {
  return `${type}:${placeOf(point)}`;
}

/** A pending task's place in claim order (see {@link storedRankOf} for the rank it is stored with). */
export function rankOf(task: Pick<TaskRecord, 'type' | 'priority' | 'seq'>): string {
  return rankAt(task.type, task);
}

/**
 * The rank a pending task is stored with. A task that waits (a retry backing off, a hand-back, a submit held by its
 * group: `notBefore` later than its submit) is stored by when it comes due, `<type>:~` then `notBefore` as 16 hex
 * digits, above every place in claim order of its type: the windows of claim order never hold it, so while many wait
 * (every task failing during an outage) no query reads them, and the tasks due are one range of their own.
 */
export function storedRankOf(task: Pick<TaskRecord, 'type' | 'priority' | 'seq' | 'notBefore' | 'submittedAt'>): string {
  return task.notBefore > task.submittedAt ? `${waitFloor(task.type)}${sortableHex(task.notBefore)}` : rankOf(task);
}

/** Below every rank of `type` (and above those of the types before it). */
export function rankFloor(type: string): string {
  return `${type}:`;
}

/** Above every place in claim order of `type`, below its waiting ranks ('~' follows every hex digit). */
export function rankCeiling(type: string): string {
  return waitFloor(type);
}

/** Below every waiting rank of `type` (see {@link storedRankOf}). */
export function waitFloor(type: string): string {
  return `${type}:~`;
}

/** The top of the waiting ranks of `type` that are due at `now`. */
export function dueCeiling(type: string, now: number): string {
  return `${waitFloor(type)}${sortableHex(now)}`;
}

/** Whether `rank`, stored with a task of `type`, is a place in claim order (not a waiting rank, nor another build's). */
export function isClaimOrderRank(type: string, rank: unknown): boolean {
  return typeof rank === 'string' && !rank.startsWith(waitFloor(type));
}

/** The place a rank of `type` stands for. */
export function pointOf(type: string, rank: string): RankPoint {
  const digits = rank.slice(type.length + 1);
  return { priority: -fromSortableHex(digits.slice(0, 16)) || 0, seq: fromSortableHex(digits.slice(16, 32)) };
}
