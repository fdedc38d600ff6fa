/*
 * The history a fault test writes and its checker reads: one JSON object per line, appended by every workload
 * process, the operator and the nemesis to one file. Appends of one short line are atomic enough on a local
 * file system (O_APPEND, one write), so processes need no coordination. `at` is always real time (Date.now()),
 * even on a node whose gatekeeper clock is skewed, so events of different nodes can be ordered.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

interface Stamped {
  /** Real time of the event, ms since the epoch. */
  at: number;
  /** NODE_NAME of the process that wrote it ('operator', 'nemesis' for the test's own events). */
  node: string;
  pid: number;
}

/** Fields every event of a job run carries. `job` tells apart two jobs of one node on one semaphore. */
interface RunStamped extends Stamped {
  semaphore: string;
  job: string;
  /** The permit's fencing token. */
  token: number;
}

/** A run began under a permit. `tick` numbers the schedule slot the run is for: floor(fire time / intervalMs). */
export interface StartEvent extends RunStamped {
  type: 'start';
  tick: number;
  /** Until when (real time) the lease vouched for the permit at the start. */
  validUntil: number;
  /** `lease.isValid()` at the start. */
  valid: boolean;
  /**
   * When the token was granted (real time; the permit's `grantedAt` less the node's clock offset). With several
   * permits, grants and starts of different holders can interleave, so token order is checked in grant order.
   */
  grantedAt?: number;
  /**
   * For a tick the workload's own timer fired and handed straight to the decorated method: when it fired (real
   * time) and its period. The library knows a tick's instant only on its cron path, where a decision that lands more
   * than half a period after the instant is dropped (`LATE_DECISION`); a direct call has no instant, so a call held
   * up that long (by a store restart, say) runs, and may run a slot another node ran and released.
   */
  firedAt?: number;
  periodMs?: number;
}

/** A side effect, made right after `lease.assertValid()` passed. */
export interface EffectEvent extends RunStamped {
  type: 'effect';
  valid: true;
  /**
   * Until when (real time) the lease vouched at that moment, if the writer records it (renewals move it): a lease
   * promises that nobody else holds before then unless it is told sooner, which a test can check for a holder that
   * was frozen and never acted again.
   */
  validUntil?: number;
}

/** `lease.assertValid()` threw: the run stops before its next side effect. */
export interface AbortEvent extends RunStamped {
  type: 'abort';
  reason: string;
}

/** The lease's AbortSignal fired while the run was going on. */
export interface SignalEvent extends RunStamped {
  type: 'signal';
  reason: string;
}

/** The run is over; `valid` is `lease.isValid()` at that moment. */
export interface EndEvent extends RunStamped {
  type: 'end';
  /** `failed`: the run threw (on purpose, in a scene about failing jobs). */
  outcome: 'done' | 'aborted' | 'failed';
  valid: boolean;
}

/**
 * What a node heard said about a job's health (`gatekeeper.job.failing` or `gatekeeper.job.recovered`), or, in a
 * control, what a naive per-replica monitor on that node would have said. Not a run event.
 */
export interface AlertEvent extends Stamped {
  type: 'alert';
  /**
   * A health turn (`failing`, `recovered`), a slot judged missed (`detail.instant`), a job no live node may run, or
   * a run past its `maxRunTime` (`detail.durationMs`).
   */
  kind: 'failing' | 'recovered' | 'missed' | 'unrunnable' | 'overran';
  job: string;
  detail?: unknown;
}

/** An operator edit: `at` is when the call returned, `startedAt` when it was made. */
export interface EditEvent extends Stamped {
  type: 'edit';
  op: string;
  semaphore: string;
  args: unknown[];
  startedAt: number;
  ok: boolean;
  error?: string;
  result?: unknown;
}

/** A fault the test injected (or healed), so bounds can be measured from it. */
export interface NemesisEvent extends Stamped {
  type: 'nemesis';
  action: string;
  target?: unknown;
}

/** An app instance as a node's report names it (a presence entry, or an election's leader). */
export interface ReportedInstance {
  instance: string;
  acquirer: string;
  group: string;
}

/**
 * What a node says about who leads and who is here (`ClusterService.status()` and `nameClashes()`), written
 * periodically and on each change it sees, so tests can measure agreement and convergence from the history alone.
 * Not a run event: the checker ignores it.
 */
export interface ReportEvent extends Stamped {
  type: 'report';
  election: string;
  /** The reporting node's own instance id (its `node` name may be shared by another process). */
  instance: string;
  /** Whether this node leads (its own lease). */
  isLeader: boolean;
  /** The leader as this node knows it, with its epoch; absent while it knows none. */
  leader?: ReportedInstance & { epoch: number };
  /** The live instances this node sees, oldest first. */
  participants: ReportedInstance[];
  /** Acquirer names used by more than one live instance, with those instances' ids. */
  clashes: Record<string, string[]>;
  /** What made the node write it: `'poll'`, or the type of the change it saw. */
  cause: string;
}

/** What an allocation node says about its allocation (`AllocationService.status()`), periodically. Not a run event. */
export interface AllocationReportEvent extends Stamped {
  type: 'allocation';
  allocation: string;
  /** Resources this node's work holds now. */
  owned: number;
  /** Largest minus smallest share among participating nodes, as this node's view has it. */
  skew: number;
  /** Resources of the plan nobody owns, as this node's view has it. */
  unowned: number;
  /** Nodes taking part, as this node's view has it. */
  participants: number;
  /** The plan's generation (0: none yet). */
  generation: number;
  /** Whether every member holds what the plan gives it. */
  settled: boolean;
}

/**
 * What a task node's `TaskService.events` said about a task (the library's own account: `completed` means the
 * store accepted the run's outcome, `rejected` that it refused it), or what a join handler received. Not a run event.
 */
export interface TaskNoteEvent extends Stamped {
  type: 'task';
  kind: 'claimed' | 'completed' | 'retrying' | 'failed' | 'invalid' | 'rejected' | 'handed-back' | 'joined' | 'submitted';
  id: string;
  epoch?: number;
  /** joined: the group, how many results and the errors by number; submitted: the task's seq. */
  detail?: unknown;
}

export type RunEvent = StartEvent | EffectEvent | AbortEvent | SignalEvent | EndEvent;
export type HistoryEvent = RunEvent | EditEvent | NemesisEvent | ReportEvent | AllocationReportEvent | TaskNoteEvent | AlertEvent;

/** An event as written, before the writer stamps it (distributes over the union, so `type` picks the fields). */
export type Unstamped<E extends HistoryEvent = HistoryEvent> = E extends unknown ? Omit<E, 'at' | 'node' | 'pid'> & Partial<Stamped> : never;

/** Appends one event; `at`, `node` and `pid` default to now, `defaultNode` and this process. */
export function appendEvent<E extends HistoryEvent = HistoryEvent>(file: string, event: Unstamped<E>, defaultNode = 'test'): E {
  const stamped = { at: eventTime(), node: defaultNode, pid: process.pid, ...event } as unknown as E;
  appendFileSync(file, `${JSON.stringify(stamped)}\n`);
  return stamped;
}

/** Records a fault of the nemesis (`freeze node-a`, `blackhole member 0`, `heal`, ...). */
export function recordNemesis(file: string, action: string, target?: unknown): NemesisEvent {
  return appendEvent<NemesisEvent>(file, { type: 'nemesis', action, target }, 'nemesis');
}

/**
 * Every event of a history file, in file order (per process, that is the order they happened in). A torn last
 * line (a process killed while appending) is skipped.
 */
export function readHistory(file: string): HistoryEvent[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const events: HistoryEvent[] = [];
  lines.forEach((line, i) => {
    try {
      events.push(JSON.parse(line) as HistoryEvent);
    } catch (error) {
      if (i !== lines.length - 1) throw new Error(`${file}:${i + 1}: not a JSON line: ${line}`, { cause: error });
    }
  });
  return events;
}

export const isReportEvent = (e: HistoryEvent): e is ReportEvent => e.type === 'report';

export const isRunEvent = (e: HistoryEvent): e is RunEvent =>
  e.type === 'start' || e.type === 'effect' || e.type === 'abort' || e.type === 'signal' || e.type === 'end';

/**
 * When an event happened: the process's own clock, as its jobs see it (a test that lives through a daylight-saving
 * moment reads its history in that time), or real time with HISTORY_REAL_TIME set, in a process whose wall clock
 * shift-clock.cjs moves to play a machine whose clock is off (which keeps the real one for this).
 */
/** Now, as the history stamps events (real time where `HISTORY_REAL_TIME` asks for it). */
export function eventTime(): number {
  const real = process.env.HISTORY_REAL_TIME ? (globalThis as { __realDateNow?: () => number }).__realDateNow : undefined;
  return real?.() ?? Date.now();
}
