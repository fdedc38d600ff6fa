import { isLive, type ScheduleRecord } from './schedule-record';
import type { ScheduleStore, VersionedSchedule } from './schedule-store';
import { scheduleSlot } from './schedule-slot';
import { Deadline } from '../core/deadline';
import { WriteConflictError } from '../core/errors/write-conflict.error';
import { readDecideWrite } from '../store/read-decide-write';

/** What one restore found and did. */
export interface ScheduleRestoreReport {
  /** Since when the store may have lost data (the newest of the ids' answers); `undefined` when none was lost. */
  readonly lostSince?: number;
  /** Records written back as this node held them (live schedules and tombstones alike). */
  readonly restored: readonly ScheduleRecord[];
  /** Ids already back in the store at the revision held here or a newer one (another node restored them, or an edit). */
  readonly alreadyBack: readonly string[];
  /** Ids deleted from outside the library (the store says they cannot have been lost): not written back. */
  readonly deletedOutside: readonly string[];
  /** Ids this node could not write back, with why (a call failed or timed out). */
  readonly failed: ReadonlyArray<{ readonly id: string; readonly reason: string }>;
}

/** Compare-and-set attempts per record before it is left to the next listing. */
const ATTEMPTS = 4;

/**
 * Writes back the schedules this node held that are gone from the store, when the store says they may have been lost
 * with its data (a Hazelcast cluster restarted empty): each record as held, revision and all, tombstones included, so
 * a schedule removed before the loss stays removed. The newest revision wins: a record already back at the revision
 * held here or newer (another node's restore, an edit made since, whose revision starts above the clock) is left as
 * it is, and one found older is replaced. Nodes restoring at once converge on the newest any of them held.
 */
export async function restoreSchedules(store: ScheduleStore, vanished: readonly ScheduleRecord[], timeoutMs: number): Promise<ScheduleRestoreReport> {
  const restored: ScheduleRecord[] = [];
  const alreadyBack: string[] = [];
  const deletedOutside: string[] = [];
  const failed: Array<{ id: string; reason: string }> = [];
  let lostSince: number | undefined;
  for (const held of vanished) {
    try {
      const lostAt = store.lostSince ? await store.lostSince(held.id, { timeoutMs }) : undefined;
      if (lostAt === undefined) {
        deletedOutside.push(held.id);
        continue;
      }
      lostSince = Math.max(lostSince ?? lostAt, lostAt);
      const outcome = await writeBack(store, held, timeoutMs);
      if (outcome === 'restored') restored.push(held);
      else if (outcome === 'back') alreadyBack.push(held.id);
      else failed.push({ id: held.id, reason: `it changed ${ATTEMPTS} times while being written back` });
    } catch (error) {
      failed.push({ id: held.id, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return { lostSince, restored, alreadyBack, deletedOutside, failed };
}

/**
 * One record written back unless the store has it at that revision or newer, in the one read-decide-write (a lost
 * answer settled by reading the record back); `busy` when it changed under every attempt.
 */
async function writeBack(store: ScheduleStore, held: ScheduleRecord, timeoutMs: number): Promise<'restored' | 'back' | 'busy'> {
  try {
    return await readDecideWrite<VersionedSchedule, ScheduleRecord, 'restored' | 'back'>(`restore schedule "${held.id}"`, scheduleSlot(store, held.id), ({ record }) => (
      record && record.revision >= held.revision ? { result: 'back' } : { result: 'restored', write: held }
    ), { attempts: ATTEMPTS, deadline: new Deadline(ATTEMPTS * 2 * timeoutMs, `Schedule "${held.id}": restore`) });
  } catch (error) {
    if (error instanceof WriteConflictError) return 'busy';
    throw error;
  }
}

/** The one line a node logs for a restore that wrote something back or could not: `undefined` when there is nothing to say. */
export function describeRestore(report: ScheduleRestoreReport): { level: 'warn' | 'error'; message: string } | undefined {
  const parts: string[] = [];
  const live = report.restored.filter(isLive).map((r) => r.id);
  const removed = report.restored.filter((r) => !isLive(r)).map((r) => r.id);
  if (live.length > 0) parts.push(`restored ${live.length} runtime schedule(s) from this node's memory: ${list(live)}`);
  if (removed.length > 0) parts.push(`kept ${removed.length} removed one(s) removed: ${list(removed)}`);
  if (report.failed.length > 0) parts.push(`could NOT restore ${report.failed.map((f) => `${f.id} (${f.reason})`).join(', ')}: define them again`);
  if (parts.length === 0) return undefined;
  const since = report.lostSince === undefined ? '' : ` (its data may be lost since ${new Date(report.lostSince).toISOString()})`;
  return { level: report.failed.length > 0 ? 'error' : 'warn', message: `Runtime schedules: the store lost data${since}; ${parts.join('; ')}` };
}

function list(ids: readonly string[]): string {
  return ids.length <= 10 ? ids.join(', ') : `${ids.slice(0, 10).join(', ')} and ${ids.length - 10} more`;
}
