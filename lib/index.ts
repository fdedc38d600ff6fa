/**
 * Run NestJS jobs once across many replicas: cron singletons with expiring, fenced permits on PostgreSQL, Redis or
 * Hazelcast, presence, leader elections, allocation and leased tasks.
 *
 * @remarks
 * The root entry holds what an application uses: the module and its options, the services and the types their
 * methods take and return, the decorators, the errors a caller may catch, the health indicator and the events.
 * What an application's own tests need (the memory backend, a manual clock) is in `nestjs-gatekeeper/testing`.
 *
 * @packageDocumentation
 */

// The module and its options
export { GatekeeperModule } from './nest/gatekeeper.module';
export {
  GatekeeperConfigurableModule, type GatekeeperModuleAsyncOptions, type GatekeeperModuleExtras,
} from './nest/gatekeeper.module-definition';
export type { GatekeeperModuleOptions, MembershipOptions } from './nest/options/gatekeeper.options';
export type { TasksOptions } from './nest/options/tasks.options';
export type { MetricsOptions } from './nest/options/metrics.options';
export type { GatekeeperAdminOptions } from './nest/options/gatekeeper-admin.options';
export type { BackendChoice, CapabilityBackends } from './nest/options/backend-choice.options';
// The store contract a backend implements (`backend`, `backends`; the suite it passes is in nestjs-gatekeeper/testing)
export type { StoreBackend } from './store/store-backend';
export type { ConnectTarget } from './store/connect-failure';
// What declaring a store new did (StoreBackend.declareNew: what `nestjs-gatekeeper store init` runs)
export type { NewStoreReport } from './store/new-store-report';
export type { NewStoreRules } from './store/new-store-rules';
// The Hazelcast backend (`hazelcast-client`, an optional peer, loaded only when a HazelcastBackend is used).
export { HazelcastBackend, type HazelcastBackendOptions } from './backends/hazelcast/hazelcast-backend';
// The PostgreSQL backend (`pg`, an optional peer, loaded only when a PostgresBackend opens).
export { PostgresBackend } from './backends/postgres/postgres-backend';
export type { PostgresBackendOptions, PostgresLostData, PostgresPool } from './backends/postgres/postgres-backend.options';
// The Redis backend (`ioredis`, an optional peer, loaded only when a RedisBackend opens).
export { RedisBackend } from './backends/redis/redis-backend';
export type { RedisBackendOptions, RedisClient, RedisLostData } from './backends/redis/redis-backend.options';
export type {
  RecordCallOptions, RecordChanges, RecordMap, RecordMapSpec, RecordWriteOptions, StoredRecord, WatchOptions,
} from './store/record-map';
export type { Counters } from './store/counter';
export type { DurationInput, SemaphoreDefinition, SemaphoreDefinitionInput } from './permits/semaphore-definition';
export type { ElectionInput, Leader } from './elections/election';
export type { AllocationInput } from './allocation/allocation';
export type { Clock } from './core/clock';

// The task store a backend may offer of its own (StoreBackend.taskStore), and what it keeps
export type { TaskStore, TaskQuery, VersionedTask, VersionedGroup } from './store/tasks/task-store';
export type { SqlTransaction, TransactionRecords } from './store/sql-transaction';

// Permits: GatekeeperService, SemaphoreAdminService and @ClusterSingleton
export {
  GatekeeperService, type AcquireOptions, type WithPermitOptions, type WithPermitResult,
} from './nest/permits/gatekeeper.service';
export { SemaphoreAdminService } from './nest/permits/semaphore-admin.service';
export { ClusterSingleton, type ClusterSingletonDecorator } from './nest/schedules/cluster-singleton.decorator';
export type { ClusterSingletonOptions } from './nest/schedules/cluster-singleton.options';
export type { CheckInOptions } from './schedules/check-in';
export type { AcquireResult } from './permits/acquire-result';
export type { DecideOptions } from './permits/permit-engine.options';
export { DenyReason } from './permits/deny-reason';
export type { NodeIdentity, Permit } from './permits/permit';
export { PermitLease } from './permits/permit-lease';
export type { SemaphoreStatus } from './permits/semaphore-status';
export type { KindGuardOptions } from './permits/semaphore-kind';
export type { GroupMigrationReport } from './permits/group-migrations';
export type { GroupMigrationRequest, MigrationSkipCode, UndoMigrationRequest } from './permits/group-migration.rules';

// Presence and elections: ClusterService and @LeaderOnly
export { ClusterService, type ClusterStatus } from './nest/elections/cluster.service';
export type { Presence } from './presence/presence';
export { LeaderOnly } from './nest/elections/leader-only.decorator';
export { LeaderLease } from './elections/leader-lease';
export type { ClusterChange } from './elections/cluster-change';

// Allocation: resource sets spread evenly over the live nodes
export { AllocationService } from './nest/allocation/allocation.service';
export type { ResourceLease } from './allocation/allocation-lease';
export type { AllocationHandlers } from './allocation/allocation-participant.options';
export type { AllocationOwner, AllocationStatus } from './allocation/allocation-status';
export type { AllocationPlan, RebalanceReason } from './allocation/allocation';

// Schedules: the run history of every @ClusterSingleton job, describe
export { ScheduleService } from './nest/schedules/schedule.service';
export type { CompleteRunInOptions } from './nest/schedules/run-in-transaction';
export type { CurrentRun } from './schedules/run/run-context';
export type { ObservedRun, RunObserver } from './schedules/run/run-observer';
export { ScheduleHandler } from './nest/schedules/schedule-handler.decorator';
export type { JsonValue, MissedRunPolicy, OverlapPolicy, ScheduleDefinition, ScheduleDefinitionInput } from './schedules/schedule-definition';
export type { LiveScheduleRecord } from './schedules/schedule-record';
export type { ScheduleChangeResult, ScheduleEditOptions } from './schedules/schedule-catalog';
export type { ScheduleOutcome } from './schedules/schedule.rules';
export type { SchedulesOptions } from './nest/options/schedules.options';
export type { JobDescription, JobHistoryView, JobPauseResult, RunNowResult, SlotEntry, SlotVerdict } from './schedules/job-view';
export type { RunNowRequested } from './schedules/run/run-now-requests';
export { RunNowRefusedError } from './schedules/errors/run-now-refused.error';
export type { RunRecord, RunTrigger, JobRunOutcome } from './schedules/run-record';
export { leaderJobName } from './core/leader-job-name';

// Leased distributed tasks: TaskService and the task decorators
export { TaskService } from './nest/tasks/task.service';
export { TaskHandler, GroupFinishedHandler, InvalidTaskHandler } from './nest/tasks/task-handler.decorator';

// Fenced HTTP routes: the receiving side of `fencingHeaders` / `fencedFetch` (nestjs-gatekeeper/fencing)
export { Fenced, FencingToken } from './nest/fencing/fenced.decorator';
// The executor a task submitted in the application's transaction is given (see nestjs-gatekeeper/fencing)
export type { FenceDialect, FenceExecutor } from './fencing/fence-executor';
export type { TaskHandlerDecoratorOptions } from './tasks/task-handler.input';
export { OncePerTrigger } from './nest/tasks/once-per-trigger.decorator';
export type { CompleteInOptions, TaskContext } from './tasks/task-handler';
export type {
  AttemptOutcome, GroupEnd, GroupJoinData, SubgroupProgress, TaskAttempt, TaskClaim, TaskGroupPosition, TaskGroupRecord,
  TaskIdentity, TaskRecord, TaskState,
} from './store/tasks/task';
export type { SubmitInput } from './tasks/task-submit.rules';
export type { TaskGroupStatus, TaskStateCounts } from './tasks/task-admin';
export type { TaskPurgeOptions } from './tasks/task-admin.input';
export type { TaskEvent } from './tasks/task-events';

// Errors a caller may catch
export { GatekeeperError } from './core/errors/gatekeeper.error';
export { ShuttingDownError } from './nest/errors/shutting-down.error';
export { StoreUnavailableError } from './core/errors/store-unavailable.error';
export { StoreUnreachableError } from './core/errors/store-unreachable.error';
export { StoreTimeoutError } from './core/errors/store-timeout.error';
export { QuorumLostError } from './core/errors/quorum-lost.error';
export { EditConflictError } from './core/errors/edit-conflict.error';
export { LeaseLostError } from './core/errors/lease-lost.error';
export { InvalidInputError } from './core/errors/invalid-input.error';
export { NotFoundError } from './core/errors/not-found.error';
export { WriteConflictError } from './core/errors/write-conflict.error';
export { CorruptStateError } from './core/errors/corrupt-state.error';
export { PermitNotHeldError } from './permits/errors/permit-not-held.error';
export { WaitTimeoutError } from './permits/errors/wait-timeout.error';
export { RetryLaterError } from './tasks/errors/retry-later.error';
export { InvalidTaskError } from './tasks/errors/invalid-task.error';
export { TaskActionRefusedError } from './tasks/errors/task-action-refused.error';

// Health and events
export { GatekeeperHealthIndicator, type GatekeeperHealthDetails, type GatekeeperHealthResult } from './nest/readouts/gatekeeper-health.indicator';
export type { JobHealthDetails } from './schedules/job-health.rules';
export type { GatekeeperEvent } from './nest/signals/gatekeeper-events';
export type { GatekeeperPhase } from './permits/permit-decisions';
