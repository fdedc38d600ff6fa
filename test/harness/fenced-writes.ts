/*
 * The fenced writes' part of a fault history: what each holder did with its write (checked its lease, then the
 * write committed or was refused), and what the resource holds at the end (its rows in commit order), with the
 * checker that reads only those. Pure but for the append.
 */
import { appendEvent, type HistoryEvent } from './history';

/**
 * A holder's write to a resource: its lease checked (`checked`), between the fence's statements (`fencing`), fenced
 * (`fenced`, with how long the fence took), then `committed` or `refused` (by the fence, or its transaction failed at
 * or before `COMMIT`: `cause` says which).
 */
export interface FencedWriteEvent {
  type: 'write';
  at: number;
  node: string;
  pid: number;
  resource: string;
  token: number;
  phase: 'checked' | 'fencing' | 'fenced' | 'committed' | 'refused';
  /** refused: the newer token the resource had accepted. */
  newer?: number;
  /** refused: why (`stale`, `lease lost`, `lease lost at COMMIT`, `wait timeout`, `transaction ended by the server`). */
  cause?: string;
  /** fenced: how long the fence call took, in milliseconds (a wait behind another holder's transaction in it). */
  waitedMs?: number;
  /** refused: the holder caught the refusal and committed anyway. */
  caught?: boolean;
}

/** The rows of a resource as its database holds them at the end, in commit order, each with its writer's token. */
export interface ResourceRowsEvent {
  type: 'resource';
  at: number;
  node: string;
  pid: number;
  resource: string;
  rows: Array<{ node: string; token: number }>;
}

/** The permit with `token` no longer held by the store's own account (read by the test from the store). */
export interface LeaseLapsedEvent {
  type: 'lapsed';
  at: number;
  node: string;
  pid: number;
  token: number;
}

export function recordLapsed(file: string, token: number): void {
  appendEvent(file, { type: 'lapsed', token } as never, 'test');
}

/**
 * Writes committed after a newer holder was granted: a `committed` write told after a `checked` write with a higher
 * token (the newer holder checked its lease, so the older one's had been taken over by then).
 */
export function commitsAfterTakeover(events: ReadonlyArray<{ type: string }>): FencedWriteEvent[] {
  const newest = new Map<string, number>();
  const late: FencedWriteEvent[] = [];
  for (const e of events as FencedWriteEvent[]) {
    if (e.type !== 'write') continue;
    if (e.phase === 'checked') newest.set(e.resource, Math.max(newest.get(e.resource) ?? 0, e.token));
    else if (e.phase === 'committed' && e.token < (newest.get(e.resource) ?? 0)) late.push(e);
  }
  return late;
}

/** Writes committed with a token after the store said that token's permit had lapsed. */
export function lateWrites(events: ReadonlyArray<{ type: string }>): FencedWriteEvent[] {
  const lapsed = new Set<number>();
  const late: FencedWriteEvent[] = [];
  for (const e of events as Array<FencedWriteEvent | LeaseLapsedEvent>) {
    if (e.type === 'lapsed') lapsed.add(e.token);
    else if (e.type === 'write' && e.phase === 'committed' && lapsed.has(e.token)) late.push(e);
  }
  return late;
}

export function recordWrite(file: string, event: Omit<FencedWriteEvent, 'type' | 'at' | 'node' | 'pid'>, node: string): void {
  appendEvent(file, { type: 'write', ...event } as never, node);
}

export function recordResourceRows(file: string, resource: string, rows: ResourceRowsEvent['rows']): void {
  appendEvent(file, { type: 'resource', resource, rows } as never, 'test');
}

/** A write that landed although a newer holder had written before it. */
export interface StaleWrite {
  resource: string;
  /** The row's writer and token, and the higher token committed before it. */
  node: string;
  token: number;
  after: number;
}

/**
 * The stale writes of a history: rows of a resource whose token is lower than a row committed before them (the
 * database's own order), and committed writes told after a committed write with a higher token (the holders' order).
 */
export function staleWrites(events: ReadonlyArray<HistoryEvent | FencedWriteEvent | ResourceRowsEvent>): StaleWrite[] {
  const stale: StaleWrite[] = [];
  for (const e of events) {
    if (e.type !== 'resource') continue;
    let highest = 0;
    for (const row of e.rows) {
      if (row.token < highest) stale.push({ resource: e.resource, node: row.node, token: row.token, after: highest });
      highest = Math.max(highest, row.token);
    }
  }
  const highestTold = new Map<string, number>();
  for (const e of events) {
    if (e.type !== 'write' || e.phase !== 'committed') continue;
    const before = highestTold.get(e.resource) ?? 0;
    if (e.token < before) stale.push({ resource: e.resource, node: e.node, token: e.token, after: before });
    highestTold.set(e.resource, Math.max(before, e.token));
  }
  return stale;
}

/** A job's runs as its history holds them in the store at the end (read by the test), each with its token and outcome. */
export interface JobRunsEvent {
  type: 'job-runs';
  at: number;
  node: string;
  pid: number;
  job: string;
  runs: Array<{ token: number; outcome: string }>;
}

export function recordJobRuns(file: string, job: string, runs: JobRunsEvent['runs']): void {
  appendEvent(file, { type: 'job-runs', job, runs } as never, 'test');
}

/**
 * Where a job's history and what its runs wrote disagree: a row of the resource whose run (by token) the history does
 * not have `completed`, and a run the history has `completed` whose row is not there. Reads the last `resource` and
 * `job-runs` events of the history.
 */
export function historyAndRowsDisagree(events: ReadonlyArray<{ type: string }>): string[] {
  const rows = (events as ResourceRowsEvent[]).filter((e) => e.type === 'resource').at(-1)?.rows ?? [];
  const runs = (events as JobRunsEvent[]).filter((e) => e.type === 'job-runs').at(-1)?.runs ?? [];
  const completed = new Set(runs.filter((r) => r.outcome === 'completed').map((r) => r.token));
  const written = new Set(rows.map((r) => r.token));
  return [
    ...rows.filter((r) => !completed.has(r.token)).map((r) => `${r.node}'s row (token ${r.token}) landed, its run is ${runs.find((run) => run.token === r.token)?.outcome ?? 'not in the history'}`),
    ...[...completed].filter((token) => !written.has(token)).map((token) => `the run with token ${token} is completed in the history, its row is not there`),
  ];
}
