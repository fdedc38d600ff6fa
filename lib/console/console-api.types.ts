// The admin API's answers as the console reads them: the library's own types, imported as types only (esbuild
// drops them), so the console and the API cannot drift. Two answers are described here instead, because their
// types live beside Node code the browser's type check cannot load; test/unit/console-api.types.spec.ts checks at
// compile time that the library's types still fit them.
import type { AllocationStatus } from '../allocation/allocation-status';
import type { ClusterOverview } from '../elections/election-status';
import type { SemaphoreDefinition } from '../permits/semaphore-definition';
import type { SemaphoreKind } from '../permits/semaphore-kind';
import type { SemaphoreStatus } from '../permits/semaphore-status';
import type { JobSummary } from '../schedules/job-summary';
import type { JobDescription, JobPauseResult, RunNowResult } from '../schedules/job-view';
import type { RunRecord } from '../schedules/run-record';
import type { SlotEntry } from '../schedules/job-view';
import type { ScheduleDefinition } from '../schedules/schedule-definition';
import type { ScheduleOverview } from '../schedules/schedule-overview';
import type { TaskRecord } from '../store/tasks/task';
import type { TaskGroupStatus, TaskStateCounts } from '../tasks/task-admin';

export type {
  AllocationStatus, ClusterOverview, JobDescription, JobPauseResult, JobSummary, RunNowResult, RunRecord, ScheduleDefinition, SlotEntry,
  ScheduleOverview, SemaphoreDefinition, TaskGroupStatus, TaskRecord, TaskStateCounts,
};

/** `GET definitions`: each definition with its kind, and the runtime schedules that use it. */
export type DefinitionView = SemaphoreDefinition & { readonly kind: SemaphoreKind; readonly schedules?: readonly string[] };

/** `GET permits`: each semaphore with its live permits and its kind. */
export type PermitsView = SemaphoreStatus & { readonly kind: SemaphoreKind };

/** `GET tasks`: the counts by type and state. */
export interface TaskCountsView {
  readonly counts: Readonly<Record<string, TaskStateCounts>>;
}

/** `POST migrate` and `POST migrate/undo` (`GroupMigrationReport`, `UndoMigrationReport`): what the console shows. */
export interface MigrationReportView {
  readonly dryRun: boolean;
  readonly changes: ReadonlyArray<{ readonly name: string; readonly from: string; readonly to: string }>;
  readonly skipped: ReadonlyArray<{ readonly name: string; readonly reason: string }>;
  readonly warnings?: readonly string[];
}

/** A schedule's change (`ScheduleChangeResult`): what the console shows. */
export interface ScheduleChangeView {
  readonly outcome: 'created' | 'updated' | 'removed' | 'unchanged';
  readonly revision: number;
}

/** A refusal's body (the admin API's exception filter): its message, and a reason code and field where it has them. */
export interface RefusalBody {
  readonly message?: string;
  readonly reason?: string;
  readonly field?: string;
  readonly actualRevision?: number;
}
