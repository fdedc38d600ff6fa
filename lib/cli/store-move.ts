import type { CapabilityState } from '../core/capability-state';
import { followStoreClock, StoreClock } from '../store/store-clock';
import { systemClock } from '../core/clock';
import { PermitMove, type PermitMoveReport } from '../permits/permit-move';
import { TaskMove, type TaskMoveReport } from '../tasks/task-move';
import { HISTORY_MAPS } from '../schedules/history-record.store';
import { SCHEDULE_MAP } from '../schedules/schedule-record.store';
import { copyRecords, type RecordCopyReport } from '../store/record-copy';
import { sameStore, writeMoveMark } from '../store/store-moves';
import type { ReachedStore } from './cli-reached-store';
import { CliUsageError, SameStoreError } from './cli-errors';

/** What `store move` can move: the capabilities whose state outlives the nodes. */
export const MOVABLE: readonly CapabilityState[] = ['permits', 'schedules', 'history', 'tasks'];

/** The record maps of the capabilities a move copies as they are stored. */
const RECORD_MAPS: Partial<Record<CapabilityState, readonly string[]>> = {
  schedules: [SCHEDULE_MAP],
  history: [HISTORY_MAPS.jobs, HISTORY_MAPS.ticks],
};

/** The capabilities `store move` was given (`all`: every movable one), checked before any store is reached. */
export function movedCapabilities(given: readonly string[]): CapabilityState[] {
  const names = given.includes('all') ? [...MOVABLE] : given;
  if (names.length === 0) throw new CliUsageError('store move: name what moves: permits, schedules, history, tasks, or all', 'capability');
  for (const name of names) {
    if (name === 'presence') throw new CliUsageError('store move: presence does not move: each node announces itself on the store its options name', 'capability');
    if (!MOVABLE.includes(name as CapabilityState)) throw new CliUsageError(`store move: '${name}' is not permits, schedules, history, tasks or all`, 'capability');
  }
  return [...new Set(names as CapabilityState[])];
}

/** What a step of the move did, per capability. */
export interface StoreMoveReport {
  readonly step: 'prepare' | 'finish';
  readonly from: string;
  readonly to: string;
  readonly permits?: PermitMoveReport;
  readonly tasks?: TaskMoveReport;
  /** `prepare` with tasks: the new store's nodes claim nothing until `finish` (see `TaskMoveHold`). */
  readonly tasksHeld?: boolean;
  readonly records?: readonly RecordCopyReport[];
}

/**
 * One step of a move from the store `from` to the store `to` (both reached, neither opened yet): `prepare` copies
 * what moves and holds the permits on `to`; `finish` marks `from` as left, waits out its permits, copies again and
 * lifts the holds (see {@link PermitMove}). Schedules and history are copied at both steps (the second brings what the
 * old nodes wrote meanwhile); tasks move at `finish` (see {@link TaskMove}). Each store then says what it is in the move (`store-moves`, shown by `status`).
 */
export async function moveStores(
  from: ReachedStore,
  to: ReachedStore,
  capabilities: readonly CapabilityState[],
  step: 'prepare' | 'finish',
  bounds: { skewMs: number; timeoutMs: number },
  onWait: (until: number, holders: readonly string[]) => void,
): Promise<StoreMoveReport> {
  await from.backend.open();
  await to.backend.open();
  const clocks: StoreClock[] = [];
  const closers: Array<() => Promise<void>> = [];
  try {
    if (await sameStore(from.backend, to.backend, { timeoutMs: bounds.timeoutMs })) {
      throw new SameStoreError(`store move: --from and --to reach one and the same ${from.backend.kind} store (what is written on the one is read on the other): nothing moved`);
    }
    const report: { -readonly [K in keyof StoreMoveReport]: StoreMoveReport[K] } = { step, from: from.backend.kind, to: to.backend.kind };
    if (capabilities.includes('permits')) {
      const side = async (reached: ReachedStore) => {
        // Permits are timed by the store's clock where it has one, as the nodes time them.
        const clock = new StoreClock(systemClock);
        clocks.push(clock);
        followStoreClock(clock, reached.backend);
        await reached.store.connect({ clock });
        await clock.sync();
        return { store: reached.store, clock, kind: reached.backend.kind };
      };
      const move = new PermitMove(await side(from), await side(to), { skewMs: bounds.skewMs, editTimeoutMs: bounds.timeoutMs }, onWait);
      report.permits = step === 'prepare' ? await move.prepare() : await move.finish();
    }
    // Tasks move at finish only: until then the old nodes work the old store's, and the new store's are held
    // (its arriving mark, written below, is what its nodes wait on: TaskMoveHold).
    if (capabilities.includes('tasks') && step === 'prepare') report.tasksHeld = true;
    if (capabilities.includes('tasks') && step === 'finish') {
      const side = async (reached: ReachedStore) => {
        const tasks = reached.tasks();
        await tasks.connect();
        closers.push(() => tasks.close());
        return { tasks, backend: reached.backend };
      };
      report.tasks = await new TaskMove(await side(from), await side(to), bounds).finish();
    }
    const maps = capabilities.flatMap((c) => RECORD_MAPS[c] ?? []);
    if (maps.length > 0) report.records = await copyRecords(from.backend, to.backend, maps, { timeoutMs: bounds.timeoutMs });
    const at = Date.now();
    for (const capability of capabilities) {
      await writeMoveMark(from.backend, capability, step === 'finish' ? { state: 'left', other: to.backend.kind, at } : null, { timeoutMs: bounds.timeoutMs });
      await writeMoveMark(to.backend, capability, step === 'prepare' ? { state: 'arriving', other: from.backend.kind, at } : null, { timeoutMs: bounds.timeoutMs });
    }
    return report;
  } finally {
    for (const clock of clocks) clock.stop();
    for (const close of closers) await close().catch(() => undefined);
    await from.store.close().catch(() => undefined);
    await to.store.close().catch(() => undefined);
    await from.backend.close().catch(() => undefined);
    await to.backend.close().catch(() => undefined);
  }
}

/** What `store move` prints, for people. */
export function storeMoveText(report: StoreMoveReport): string {
  const lines: string[] = [];
  const { from, to } = report;
  if (report.permits) {
    const names = report.permits.copied.join(', ') || '(none)';
    lines.push(report.step === 'prepare'
      ? `Permits: copied to ${to}, held there (nothing is granted on ${to} until finish): ${names}.`
      : `Permits: ${from} marked as left (nothing is granted there any more); waited ${(report.permits.waitedMs / 1000).toFixed(1)} s for its last permit to lapse; granted on ${to} from now on: ${names}.`);
  }
  if (report.tasksHeld) lines.push(`Tasks: held on ${to} (its nodes submit but claim nothing until finish); they move at finish.`);
  if (report.tasks) {
    const { moved, alreadyThere, left } = report.tasks;
    const counts = Object.entries(moved).map(([state, n]) => `${n} ${state}`).join(', ') || 'none';
    lines.push(`Tasks: moved to ${to} (${counts}) and taken off ${from}; a running one moved with its claim, and is taken over once that lapses.`);
    if (alreadyThere.length > 0) lines.push(`Tasks ${to} had already (same id), taken off ${from}; the copy on ${to} kept unless it was still pending there: ${idsText(alreadyThere)}.`);
    if (left.length > 0) lines.push(`Tasks still on ${from}, where a live node claimed, renewed, finished or submitted them while this ran: ${idsText(left)}. Stop the old nodes and run this again.`);
  }
  for (const r of report.records ?? []) lines.push(`${r.map}: ${r.created} created, ${r.replaced} replaced, ${r.same} already there, on ${to}.`);
  lines.push(report.step === 'prepare'
    ? `Next: start the nodes with the ${to} store, then run this command again with --finish.`
    : `Done: the ${from} store says it was left for ${to}; edits aimed at it are refused.`);
  return lines.join('\n');
}

/** Task ids for people: the first 20, then how many more (`--json` has them all). */
function idsText(ids: readonly string[]): string {
  return ids.length <= 20 ? ids.join(', ') : `${ids.slice(0, 20).join(', ')} and ${ids.length - 20} more (--json lists them all)`;
}
