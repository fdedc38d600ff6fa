import { CorruptStateError } from '../core/errors/corrupt-state.error';
import type { JobHistory, NodeTicks, RunCounts, SlotRange } from './job-history';
import type { SlotVerdict } from './job-view';
import type { JobRunOutcome, RunRecord, RunTrigger } from './run-record';

/*
 * Canonical JSON for the history maps: keys in a fixed order and no `undefined`, so the bytes a writer read are the
 * bytes the member compares in a compare-and-set (HAZELCAST.md). Values that do not read as a history throw
 * CorruptStateError naming the key: a reader reports them, a writer starts the entry over.
 */

const TRIGGERS: ReadonlySet<string> = new Set<RunTrigger>(['schedule', 'manual', 'catchUp', 'call']);
const VERDICTS: ReadonlySet<string> = new Set<SlotVerdict>(['missed', 'paused', 'overlap', 'noEligibleNode']);
const OUTCOMES: ReadonlySet<string> = new Set<JobRunOutcome>(['running', 'completed', 'failed', 'aborted', 'stopped', 'replaced']);

export function encodeHistory(history: JobHistory): string {
  return JSON.stringify({
    job: history.job,
    revision: history.revision,
    runs: history.runs.map(runFields),
    lastInstant: history.lastInstant,
    lastFailure: history.lastFailure && runFields(history.lastFailure),
    counts: sortedCounts(history.counts),
    missed: { count: history.missed.count, last: history.missed.last },
    updatedAt: history.updatedAt,
    createdAt: history.createdAt,
    failingSince: history.failingSince,
    turn: history.turn && { id: history.turn.id, at: history.turn.at },
    slots: history.slots?.map((r) => ({ verdict: r.verdict, first: r.first, last: r.last, count: r.count, node: r.node })),
    judgedThrough: history.judgedThrough,
    schedule: history.schedule,
    ranAhead: history.ranAhead,
    said: history.said,
  });
}

export function decodeHistory(key: string, raw: string): JobHistory {
  const value = parse(key, raw) as Partial<JobHistory>;
  const fail = (what: string) => new CorruptStateError(key, `job history: ${what}`);
  if (typeof value.job !== 'string' || !Number.isSafeInteger(value.revision) || !Array.isArray(value.runs)) throw fail('job, revision or runs missing');
  if (typeof value.missed !== 'object' || value.missed === null || typeof value.missed.count !== 'number') throw fail('missed is not a count');
  const runs = value.runs.map((run) => decodeRun(key, run));
  return {
    job: value.job,
    revision: value.revision!,
    runs,
    lastInstant: optionalNumber(value.lastInstant),
    lastFailure: value.lastFailure === undefined ? undefined : decodeRun(key, value.lastFailure),
    counts: (value.counts ?? {}) as RunCounts,
    missed: { count: value.missed.count, last: optionalNumber(value.missed.last) },
    updatedAt: typeof value.updatedAt === 'number' ? value.updatedAt : 0,
    ...(typeof value.createdAt === 'number' && { createdAt: value.createdAt }),
    ...(typeof value.failingSince === 'number' && { failingSince: value.failingSince }),
    ...(isTurn(value.turn) && { turn: { id: value.turn.id, at: value.turn.at } }),
    ...(Array.isArray(value.slots) && { slots: value.slots.map((range) => decodeSlot(key, range)) }),
    ...(typeof value.judgedThrough === 'number' && { judgedThrough: value.judgedThrough }),
    ...(typeof value.schedule === 'string' && { schedule: value.schedule }),
    ...(Array.isArray(value.ranAhead) && { ranAhead: value.ranAhead.filter((at): at is number => typeof at === 'number') }),
    ...(typeof value.said === 'string' && { said: value.said }),
  };
}

function decodeSlot(key: string, value: unknown): SlotRange {
  const range = value as Partial<SlotRange> | null;
  const ok = range !== null && typeof range === 'object' && VERDICTS.has(String(range.verdict)) && typeof range.first === 'number'
    && typeof range.last === 'number' && typeof range.count === 'number' && typeof range.node === 'string';
  if (!ok) throw new CorruptStateError(key, `job history: a slot range does not read as one (${JSON.stringify(value)?.slice(0, 120)})`);
  return { verdict: range.verdict!, first: range.first!, last: range.last!, count: range.count!, node: range.node! };
}

function isTurn(value: unknown): value is NonNullable<JobHistory['turn']> {
  const turn = value as JobHistory['turn'];
  return typeof turn === 'object' && turn !== null && typeof turn.id === 'string' && typeof turn.at === 'number';
}

export function encodeTicks(ticks: NodeTicks): string {
  const skipped: Record<string, Record<string, number>> = {};
  for (const job of Object.keys(ticks.skipped).sort()) skipped[job] = sortedCounts(ticks.skipped[job]);
  return JSON.stringify({ instance: ticks.instance, node: ticks.node, since: ticks.since, updatedAt: ticks.updatedAt, skipped });
}

export function decodeTicks(key: string, raw: string): NodeTicks {
  const value = parse(key, raw) as Partial<NodeTicks>;
  if (typeof value.instance !== 'string' || typeof value.node !== 'string' || typeof value.skipped !== 'object' || value.skipped === null) {
    throw new CorruptStateError(key, 'skipped ticks: instance, node or counts missing');
  }
  return { instance: value.instance, node: value.node, since: Number(value.since) || 0, updatedAt: Number(value.updatedAt) || 0, skipped: value.skipped };
}

function decodeRun(key: string, value: unknown): RunRecord {
  const run = value as Partial<RunRecord> | null;
  const ok = run !== null && typeof run === 'object'
    && typeof run.id === 'string' && typeof run.job === 'string' && TRIGGERS.has(String(run.trigger))
    && typeof run.node === 'string' && typeof run.instance === 'string' && typeof run.token === 'number'
    && typeof run.startedAt === 'number' && OUTCOMES.has(String(run.outcome));
  if (!ok) throw new CorruptStateError(key, `job history: a run does not read as one (${JSON.stringify(value)?.slice(0, 120)})`);
  return {
    id: run.id!, job: run.job!, trigger: run.trigger!, instant: optionalNumber(run.instant), node: run.node!, instance: run.instance!,
    token: run.token!, startedAt: run.startedAt!, durationMs: optionalNumber(run.durationMs), outcome: run.outcome!,
    request: typeof run.request === 'string' ? run.request : undefined,
    error: typeof run.error === 'string' ? run.error : undefined,
    ...(typeof run.stack === 'string' && { stack: run.stack }),
  };
}

function runFields(run: RunRecord): Record<string, unknown> {
  return {
    id: run.id, job: run.job, trigger: run.trigger, instant: run.instant, node: run.node, instance: run.instance, token: run.token,
    startedAt: run.startedAt, durationMs: run.durationMs, outcome: run.outcome, request: run.request, error: run.error, stack: run.stack,
  };
}

function sortedCounts(counts: Readonly<Record<string, number | undefined>>): Record<string, number> {
  const sorted: Record<string, number> = {};
  for (const key of Object.keys(counts).sort()) if (counts[key] !== undefined) sorted[key] = counts[key]!;
  return sorted;
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function parse(key: string, raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new CorruptStateError(key, `not JSON: ${(error as Error).message}`);
  }
}
