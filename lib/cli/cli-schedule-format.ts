import { formatDuration } from '../core/duration';
import type { Permit } from '../permits/permit';
import type { ScheduleChangeResult } from '../schedules/schedule-catalog';
import type { LiveScheduleRecord } from '../schedules/schedule-record';
import type { RunRecord } from '../schedules/run-record';
import { formatAge } from './cli-cluster-format';
import { CLI_NAME } from './cli-format';
import { renderTable } from './cli-table';

const instant = (ms: number | undefined): string => (ms === undefined ? '-' : new Date(ms).toISOString());

/** One schedule of `schedules list`: the record, its next fire instant and its newest run. */
export interface ListedSchedule {
  readonly id: string;
  readonly revision: number;
  readonly updatedAt: number;
  readonly updatedBy: string;
  readonly definition: LiveScheduleRecord['definition'];
  /** Its next fire instant; absent while paused, or when the cron package cannot be loaded here. */
  readonly nextRun?: number;
  readonly lastRun?: RunRecord;
}

/**
 * Who takes part in a schedule, as far as the cluster tells (the CLI has no app code, so it cannot list the nodes
 * that have the handler): the live holders of its semaphore, and whether any node defined that semaphore.
 */
export interface ScheduleTakers {
  /** `paused` (whoever still holds its permit); `running`: a live node holds its permit (it has the handler); `notTakenUp`: no node defined its semaphore; `noHolder`: defined once, nobody holds it now. */
  readonly verdict: 'running' | 'paused' | 'notTakenUp' | 'noHolder';
  /** Live holders of its permit: nodes with the handler. */
  readonly holders: ReadonlyArray<Pick<Permit, 'acquirer' | 'group' | 'instance' | 'fencingToken' | 'expiresAt'>>;
  /** Whether its semaphore is defined (the first node with the handler defines it when it takes the schedule up). */
  readonly semaphoreDefined: boolean;
}

/** What `schedules show` prints as JSON. */
export interface ShownSchedule extends ListedSchedule {
  readonly nextRuns: number[];
  /** Why `nextRuns` has fewer instants than asked for (the cron package's horizon ended first). */
  readonly nextRunsNote?: string;
  readonly takers: ScheduleTakers;
}

/** `schedules list` as a table. */
export function scheduleListText(schedules: readonly ListedSchedule[], now = Date.now()): string {
  if (schedules.length === 0) return 'no runtime schedules in the cluster';
  return renderTable(
    ['ID', 'HANDLER', 'CRON', 'ZONE', 'PAUSED', 'REVISION', 'NEXT RUN', 'LAST RUN'],
    schedules.map((s) => [
      s.id, s.definition.handler, s.definition.cron, s.definition.timeZone, s.definition.paused ? 'yes' : 'no', s.revision,
      s.definition.paused ? '-' : instant(s.nextRun),
      s.lastRun ? `${s.lastRun.outcome} on ${s.lastRun.node}, ${formatAge(now - s.lastRun.startedAt)} ago` : 'never',
    ]),
  );
}

/** What the cluster tells of who runs the schedule, in a sentence. */
function takersText(s: ShownSchedule): string {
  const { handler, semaphore } = s.definition;
  const t = s.takers;
  const holders = t.holders.map((h) => `${h.acquirer} (group ${h.group}, token ${h.fencingToken})`).join(', ');
  switch (t.verdict) {
    case 'running':
      return `run by: ${holders}: holds its permit, so it has handler "${handler}"`;
    case 'paused':
      return `run by: nobody while paused${holders ? ` (its permit is still held by ${holders} until it lapses)` : ''}`;
    case 'notTakenUp':
      return `run by: nobody yet: no node has taken it up (its semaphore "${semaphore}" is not defined, which the first node with @ScheduleHandler('${handler}') does within a second of seeing it). If that stays so, no live node has the handler.`;
    default:
      return `run by: no live node holds its permit now. A node with handler "${handler}" takes it at a fire instant and keeps it, so if nobody holds it after ${instant(s.nextRuns[0])}, no live node has the handler.`;
  }
}

/** `schedules show` for people. */
export function scheduleText(s: ShownSchedule, now = Date.now()): string {
  const d = s.definition;
  const last = s.lastRun;
  return [
    `schedule ${s.id}: revision ${s.revision}, updated ${formatAge(now - s.updatedAt)} ago by ${s.updatedBy}${d.paused ? ', PAUSED' : ''}`,
    `cron: ${d.cron} (zone ${d.timeZone}); handler: ${d.handler}; data: ${JSON.stringify(d.data)}`,
    `permit: semaphore ${d.semaphore}, permits ${d.permits}, duration ${formatDuration(d.durationMs)}, group ${d.groupPattern}, acquirer ${d.acquirerPattern}`,
    `missed runs: ${d.missedRuns}${d.catchUpWindowMs === undefined ? '' : ` (catch-up window ${formatDuration(d.catchUpWindowMs)})`}; overlap: ${d.overlap}${d.replaceWaitMs === undefined ? '' : ` (wait ${formatDuration(d.replaceWaitMs)})`}`,
    ...(d.health ? [`health: ${d.health.graceMs === undefined ? 'no grace' : `late after ${formatDuration(d.health.graceMs)}`}; failing after ${d.health.failureThreshold} failed run(s) in a row, recovered after ${d.health.recoveryThreshold} completed`] : []),
    ...(d.checkIn ? [`check-ins: ${[d.checkIn.start && `start ${d.checkIn.start}`, `success ${d.checkIn.success}`, d.checkIn.failure && `failure ${d.checkIn.failure}`].filter(Boolean).join(', ')} (wait ${formatDuration(d.checkIn.timeoutMs)})`] : []),
    `next runs: ${d.paused ? 'none while paused' : s.nextRunsNote ? `${s.nextRuns.map(instant).join(', ')} (${s.nextRunsNote})` : s.nextRuns.length > 0 ? s.nextRuns.map(instant).join(', ') : 'unknown here (the cron package cannot be loaded)'}`,
    `last run: ${last ? `${instant(last.startedAt)} (${last.trigger}) on ${last.node}, token ${last.token}: ${last.outcome}${last.error ? `: ${last.error}` : ''}` : 'none'}`,
    takersText(s),
    `(runs: ${CLI_NAME} jobs history ${s.id})`,
  ].join('\n');
}

/** A change's outcome for people. */
export function changeText(r: ScheduleChangeResult, action: 'upsert' | 'pause' | 'resume' | 'remove'): string {
  if (r.outcome === 'unchanged') {
    return r.schedule ? `schedule ${r.id}: unchanged, revision ${r.revision} (nothing was written)` : `schedule ${r.id}: nothing to ${action} (no such schedule)`;
  }
  const done = { upsert: r.outcome, pause: 'paused', resume: 'resumed', remove: 'removed' }[action];
  return `schedule ${r.id}: ${done}, revision ${r.revision}`;
}
