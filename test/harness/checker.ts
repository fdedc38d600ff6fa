/*
 * The checker: reads only a history (no cluster, no clocks) and says which safety promises it breaks. Pure, so
 * it is unit-tested on synthetic histories and every capability's fault test can run it on a real one.
 */
import type { EditEvent, HistoryEvent } from './history';
import { holderOf, runsOf, type Run } from './runs';

export type ViolationKind = 'overlap' | 'invalid-start' | 'token-order' | 'duplicate-tick' | 'close-starts' | 'lost-edit';

/** One broken promise, with what a person needs to find it in the history. */
export interface Violation {
  kind: ViolationKind;
  semaphore: string;
  detail: string;
  /** When it happened (real time). */
  at: number;
  /** overlap: how long more than `permits` leases were valid at once. */
  overlapMs?: number;
}

export interface CheckOptions {
  /** Permits per semaphore, or one number for all. */
  permits: Record<string, number> | number;
  /** A run must start with at least this much validity left (validUntil - at). Default 0. */
  startMarginMs?: number;
  /**
   * Two starts of one job (semaphore and job name, on any nodes) must be at least this far apart (ms), by
   * semaphore or one number for all: half the job's period, say. Not checked when absent.
   */
  minStartGapMs?: Record<string, number> | number;
  /**
   * Lost edits: the final definitions by semaphore, and per op a predicate saying whether an edit's effect is in
   * them. Edits that reported ok and fail their predicate are lost; ops without a predicate are not checked.
   */
  edits?: {
    final: Record<string, unknown>;
    applied: Record<string, (edit: EditEvent, final: unknown) => boolean>;
  };
}

export interface HistoryStats {
  runs: number;
  runsPerNode: Record<string, number>;
  runsPerSemaphore: Record<string, number>;
  /** New grants seen after the first, per semaphore (token changes). */
  handovers: Record<string, number>;
  effects: number;
  aborted: number;
  signals: number;
  unfinished: number;
  /** Longest period with more than `permits` valid leases, over all semaphores (0 if none). */
  maxOverlapMs: number;
  /** The smallest time between two starts of one job, by `semaphore/job` (jobs that started at least twice). */
  smallestStartGapMs: Record<string, number>;
  edits: { ok: number; failed: number; unchecked: number };
}

export interface CheckResult {
  violations: Violation[];
  stats: HistoryStats;
  runs: Run[];
}

/** Checks a history against the safety model. */
export function checkHistory(events: HistoryEvent[], options: CheckOptions): CheckResult {
  const runs = runsOf(events);
  const permitsOf = (semaphore: string) => (typeof options.permits === 'number' ? options.permits : options.permits[semaphore] ?? 1);
  const bySemaphore = groupBy(runs, (r) => r.semaphore);
  const violations: Violation[] = [];
  for (const [semaphore, semaphoreRuns] of bySemaphore) {
    violations.push(
      ...overlaps(semaphore, semaphoreRuns, permitsOf(semaphore)),
      ...tokenOrder(semaphore, semaphoreRuns),
      ...duplicateTicks(semaphore, semaphoreRuns, permitsOf(semaphore)),
      ...closeStarts(semaphore, semaphoreRuns, typeof options.minStartGapMs === 'number' ? options.minStartGapMs : options.minStartGapMs?.[semaphore]),
    );
  }
  violations.push(...invalidStarts(runs, options.startMarginMs ?? 0));
  const edits = events.filter((e): e is EditEvent => e.type === 'edit');
  violations.push(...lostEdits(edits, options.edits));
  violations.sort((a, b) => a.at - b.at);
  return { violations, stats: statsOf(runs, bySemaphore, violations, edits, options.edits), runs };
}

/** More than `permits` distinct holders (process + token) valid at one instant. Closed intervals: touching counts. */
function overlaps(semaphore: string, runs: Run[], permits: number): Violation[] {
  const points = runs.filter((r) => r.valid).flatMap((r) => {
    const holder = `${holderOf(r)}#${r.token}`;
    return [{ at: r.valid!.from, delta: 1, holder }, { at: r.valid!.to, delta: -1, holder }];
  });
  points.sort((a, b) => a.at - b.at || b.delta - a.delta); // at one instant, starts before ends
  const active = new Map<string, number>();
  const found: Violation[] = [];
  let since: { at: number; holders: Set<string> } | undefined;
  for (const p of points) {
    active.set(p.holder, (active.get(p.holder) ?? 0) + p.delta);
    if (active.get(p.holder) === 0) active.delete(p.holder);
    if (active.size > permits) {
      since ??= { at: p.at, holders: new Set() };
      for (const h of active.keys()) since.holders.add(h);
    } else if (since) {
      const overlapMs = p.at - since.at;
      found.push({
        kind: 'overlap', semaphore, at: since.at, overlapMs,
        detail: `${semaphore}: ${since.holders.size} leases valid at once for ${overlapMs} ms from ${iso(since.at)} `
          + `(permits ${permits}): ${[...since.holders].join(', ')}`,
      });
      since = undefined;
    }
  }
  return found;
}

/** A run that began without a valid lease, or with less than `marginMs` of it left. */
function invalidStarts(runs: Run[], marginMs: number): Violation[] {
  return runs.filter((r) => !r.start.valid || r.start.validUntil - r.start.at < marginMs).map((r) => ({
    kind: 'invalid-start' as const, semaphore: r.semaphore, at: r.start.at,
    detail: `${r.semaphore}: ${holderOf(r)} started token ${r.token} at ${iso(r.start.at)} with valid=${r.start.valid} `
      + `and ${r.start.validUntil - r.start.at} ms of validity left (margin ${marginMs} ms)`,
  }));
}

/**
 * In grant order (the start event's `grantedAt`, else its start), a new token must exceed every token granted
 * before it, and a token belongs to one process only. Grants in the same millisecond are not ordered.
 */
function tokenOrder(semaphore: string, runs: Run[]): Violation[] {
  const grantOf = (r: Run) => r.start.grantedAt ?? r.start.at;
  const owner = new Map<number, string>();
  let highest = { token: -Infinity, grantedAt: -Infinity };
  const found: Violation[] = [];
  for (const r of [...runs].sort((a, b) => grantOf(a) - grantOf(b))) {
    const holder = holderOf(r);
    const known = owner.get(r.token);
    if (known === undefined) {
      if (r.token <= highest.token && grantOf(r) > highest.grantedAt) {
        found.push({ kind: 'token-order', semaphore, at: r.start.at,
          detail: `${semaphore}: new token ${r.token} (${holder}, granted ${iso(grantOf(r))}) is not above ${highest.token}, `
            + `granted before it (${iso(highest.grantedAt)})` });
      }
      owner.set(r.token, holder);
      if (r.token > highest.token) highest = { token: r.token, grantedAt: grantOf(r) };
    } else if (known !== holder) {
      found.push({ kind: 'token-order', semaphore, at: r.start.at,
        detail: `${semaphore}: token ${r.token} used by ${known} and by ${holder} (${iso(r.start.at)})` });
    }
  }
  return found;
}

/**
 * One schedule slot of one job run more times than there are permits. A repeat decided more than half a period
 * after its tick fired (a direct call, see `StartEvent.firedAt`) is a late call, which the cron path would drop and
 * a direct call cannot: it is not counted.
 */
function duplicateTicks(semaphore: string, runs: Run[], permits: number): Violation[] {
  const found: Violation[] = [];
  const onTime = ({ start }: Run) => start.firedAt === undefined || start.periodMs === undefined || start.at - start.firedAt <= start.periodMs / 2;
  for (const [key, ofSlot] of groupBy(runs, (r) => `${r.job}@${r.tick}`)) {
    const slot = [...ofSlot].sort((a, b) => a.start.at - b.start.at).filter((r, i) => i === 0 || onTime(r));
    if (slot.length <= permits) continue;
    found.push({ kind: 'duplicate-tick', semaphore, at: slot[0].start.at,
      detail: `${semaphore}: tick ${key} started ${slot.length} times (permits ${permits}) by `
        + `${slot.map((r) => `${holderOf(r)}#${r.token}`).join(', ')}` });
  }
  return found;
}

/** Two consecutive starts of one job closer than `minGapMs` (a run decided late, then the next tick). */
function closeStarts(semaphore: string, runs: Run[], minGapMs: number | undefined): Violation[] {
  if (minGapMs === undefined) return [];
  const found: Violation[] = [];
  for (const [job, starts] of startsByJob(runs)) {
    starts.forEach((r, i) => {
      const before = starts[i - 1];
      if (!before || r.start.at - before.start.at >= minGapMs) return;
      found.push({ kind: 'close-starts', semaphore, at: r.start.at,
        detail: `${semaphore}: ${job} started by ${holderOf(before)}#${before.token} at ${iso(before.start.at)} (tick ${before.tick}) and again `
          + `${r.start.at - before.start.at} ms later by ${holderOf(r)}#${r.token} (tick ${r.tick}); at least ${minGapMs} ms apart expected` });
    });
  }
  return found;
}

/** The runs of each job (by name) in start order. */
function startsByJob(runs: Run[]): Map<string, Run[]> {
  return new Map([...groupBy(runs, (r) => r.job)].map(([job, rs]) => [job, [...rs].sort((a, b) => a.start.at - b.start.at)]));
}

function lostEdits(edits: EditEvent[], check: CheckOptions['edits']): Violation[] {
  if (!check) return [];
  return edits.filter((e) => e.ok && check.applied[e.op] && !check.applied[e.op](e, check.final[e.semaphore])).map((e) => ({
    kind: 'lost-edit' as const, semaphore: e.semaphore, at: e.at,
    detail: `${e.semaphore}: ${e.op}(${JSON.stringify(e.args)}) by ${e.node} reported ok at ${iso(e.at)} but is not in the `
      + `final state ${JSON.stringify(check.final[e.semaphore])}`,
  }));
}

function statsOf(
  runs: Run[], bySemaphore: Map<string, Run[]>, violations: Violation[], edits: EditEvent[], check: CheckOptions['edits'],
): HistoryStats {
  const count = (key: (r: Run) => string) => Object.fromEntries([...groupBy(runs, key)].map(([k, v]) => [k, v.length]));
  return {
    runs: runs.length,
    runsPerNode: count((r) => r.node),
    runsPerSemaphore: count((r) => r.semaphore),
    handovers: Object.fromEntries([...bySemaphore].map(([s, rs]) => [s, Math.max(0, new Set(rs.map((r) => r.token)).size - 1)])),
    effects: runs.reduce((n, r) => n + r.effects, 0),
    aborted: runs.filter((r) => r.outcome === 'aborted').length,
    signals: runs.filter((r) => r.events.some((e) => e.type === 'signal')).length,
    unfinished: runs.filter((r) => r.outcome === 'unfinished').length,
    maxOverlapMs: Math.max(0, ...violations.filter((v) => v.kind === 'overlap').map((v) => v.overlapMs ?? 0)),
    smallestStartGapMs: Object.fromEntries([...bySemaphore].flatMap(([semaphore, rs]) => [...startsByJob(rs)]
      .filter(([, starts]) => starts.length > 1)
      .map(([job, starts]) => [`${semaphore}/${job}`, Math.min(...starts.slice(1).map((r, i) => r.start.at - starts[i].start.at))]))),
    edits: {
      ok: edits.filter((e) => e.ok).length,
      failed: edits.filter((e) => !e.ok).length,
      unchecked: edits.filter((e) => e.ok && !check?.applied[e.op]).length,
    },
  };
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    groups.set(k, [...(groups.get(k) ?? []), item]);
  }
  return groups;
}

const iso = (at: number) => new Date(at).toISOString();
