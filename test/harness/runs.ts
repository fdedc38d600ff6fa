/*
 * Job runs rebuilt from a history: the events of one run share a process, a job and a token, from its `start`
 * to its `end` (or to the last event, for a process that was killed). The checker reasons about runs.
 */
import { isRunEvent, type HistoryEvent, type RunEvent, type StartEvent } from './history';

/** One run of a job under one permit. */
export interface Run {
  node: string;
  pid: number;
  job: string;
  semaphore: string;
  token: number;
  tick: number;
  start: StartEvent;
  events: RunEvent[];
  /** Side effects made (each after `assertValid()` passed). */
  effects: number;
  /** When validity was lost: the first `abort` or `signal`, if any. */
  lostAt?: number;
  /** `done`/`aborted` from its `end` event, `unfinished` if it has none (killed, or still running). */
  outcome: 'done' | 'aborted' | 'failed' | 'unfinished';
  /**
   * When the run claimed a valid lease: from its start to its last point still known valid (a valid start, an
   * effect, a valid end) before validity was lost. Undefined if it never claimed one.
   */
  valid?: { from: number; to: number };
}

/** Identity of the process that holds a permit: node name and pid (one process is one instance). */
export const holderOf = (r: { node: string; pid: number }): string => `${r.node}/${r.pid}`;

/** Groups run events into runs, in start order. Events outside any run (a late signal) are ignored. */
export function runsOf(events: HistoryEvent[]): Run[] {
  const open = new Map<string, Run>();
  const runs: Run[] = [];
  for (const event of events) {
    if (!isRunEvent(event)) continue;
    const key = `${event.pid}/${event.job}`;
    if (event.type === 'start') {
      const run: Run = {
        node: event.node, pid: event.pid, job: event.job, semaphore: event.semaphore, token: event.token, tick: event.tick,
        start: event, events: [event], effects: 0, outcome: 'unfinished',
      };
      open.set(key, run);
      runs.push(run);
      continue;
    }
    const run = open.get(key);
    if (!run || run.token !== event.token) continue;
    run.events.push(event);
    if (event.type === 'effect') run.effects++;
    if ((event.type === 'abort' || event.type === 'signal') && run.lostAt === undefined) run.lostAt = event.at;
    if (event.type === 'end') {
      run.outcome = event.outcome;
      open.delete(key);
    }
  }
  for (const run of runs) run.valid = validity(run);
  return runs.sort((a, b) => a.start.at - b.start.at);
}

/** Validity ends at the first abort or signal (in the process's own order); nothing after it counts. */
function validity(run: Run): Run['valid'] {
  const lost = run.events.findIndex((e) => e.type === 'abort' || e.type === 'signal');
  const points = run.events
    .slice(0, lost < 0 ? undefined : lost)
    .filter((e) => (e.type === 'start' && e.valid) || e.type === 'effect' || (e.type === 'end' && e.valid))
    .map((e) => e.at);
  if (points.length === 0) return undefined;
  return { from: run.start.at, to: Math.max(...points) };
}
