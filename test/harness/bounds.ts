/*
 * Measured bounds: how long from one kind of event to the next of another (an edit to the holder's signal, a
 * freeze to the takeover's start), so a test can compare what it saw with the bound a capability promises.
 */
import type { HistoryEvent } from './history';

/** One `from` event and the first matching `to` event at or after it (none if it never came). */
export interface Gap<F extends HistoryEvent = HistoryEvent, T extends HistoryEvent = HistoryEvent> {
  from: F;
  to?: T;
  /** `to.at - from.at`, if `to` came. */
  ms?: number;
}

/**
 * For every event matching `from` (in time order), the first later event (at or after it, any process) that
 * matches `to(event, fromEvent)`, e.g. `gaps(h, isEdit, (e, edit) => e.type === 'signal' && e.semaphore === edit.semaphore)`.
 */
export function gaps<F extends HistoryEvent, T extends HistoryEvent>(
  events: HistoryEvent[],
  from: (e: HistoryEvent) => e is F,
  to: (e: HistoryEvent, from: F) => e is T,
): Array<Gap<F, T>>;
export function gaps(
  events: HistoryEvent[],
  from: (e: HistoryEvent) => boolean,
  to: (e: HistoryEvent, from: HistoryEvent) => boolean,
): Gap[];
export function gaps(
  events: HistoryEvent[],
  from: (e: HistoryEvent) => boolean,
  to: (e: HistoryEvent, from: HistoryEvent) => boolean,
): Gap[] {
  const ordered = events.map((e, i) => ({ e, i })).sort((a, b) => a.e.at - b.e.at || a.i - b.i).map(({ e }) => e);
  return ordered.flatMap((start, i) => {
    if (!from(start)) return [];
    const end = ordered.slice(i + 1).find((e) => to(e, start));
    return [end ? { from: start, to: end, ms: end.at - start.at } : { from: start }];
  });
}

/** Count, how many never got their `to`, and the largest and median gap. */
export function summarize(found: Gap[]): { count: number; missing: number; maxMs?: number; medianMs?: number } {
  const ms = found.flatMap((g) => (g.ms === undefined ? [] : [g.ms])).sort((a, b) => a - b);
  return {
    count: found.length,
    missing: found.length - ms.length,
    maxMs: ms.at(-1),
    medianMs: ms.length ? ms[Math.floor((ms.length - 1) / 2)] : undefined,
  };
}
