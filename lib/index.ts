// Nest integration
export { GatekeeperModule } from './nest/gatekeeper.module';
export type { GatekeeperModuleExtras } from './nest/gatekeeper.module-definition';
export { GATEKEEPER_MODULE_OPTIONS } from './nest/gatekeeper.module-definition';
export type { GatekeeperModuleOptions } from './nest/gatekeeper.options';
export {
  GatekeeperService,
  type AcquireOptions,
  type WithPermitOptions,
  type WithPermitResult,
} from './nest/permits/gatekeeper.service';
export { ClusterService, type ClusterStatus, type Participant } from './nest/elections/cluster.service';
export { LeaderOnly } from './nest/elections/leader-only.decorator';
export type { LeaderWork } from './nest/elections/elections.runtime';
export { LeaderLease } from './elections/leader-lease';
export { LeaderCandidate, candidatePermitsOf, type CandidatePermits, type LeaderCandidateOptions } from './elections/leader-candidate';
export { DEFAULT_ELECTION, electionSemaphore, type ElectionInput, type Leader } from './elections/election';
export type {
  ClusterChange, LeaderChangedChange, LeaderElectedChange, LeaderLostChange, ParticipantChange,
} from './elections/cluster-change';
export { LeadershipLostError } from './elections/errors/leadership-lost.error';
export { UnknownElectionError } from './elections/errors/unknown-election.error';
export { LeaderTimeoutError } from './elections/errors/leader-timeout.error';
export { ElectionNotFoundError } from './elections/errors/election-not-found.error';
export {
  clusterOverview, electionStatusOf, electionStatuses, findElection, participantStatuses, type ClusterOverview,
  type ElectionDefinitionStatus, type ElectionLeader, type ElectionStatus, type ParticipantStatus,
} from './elections/election-status';
export { readElection, resignLeader, validateElectionName, type ElectionAdminPort, type ResignResult } from './elections/election-admin';
export type { MembershipOptions } from './nest/gatekeeper.options';
export type { Presence, PresenceIdentity, MembershipChanges } from './presence/presence';
export type { PresenceStore, PresenceStoreEvents, PresenceCallOptions } from './presence/presence-store';
export { MemoryPresenceStore, MemoryPresenceBackend } from './presence/memory-presence.store';
export { HazelcastPresenceStore, type HazelcastPresenceStoreOptions } from './presence/hazelcast-presence.store';
export { HazelcastConnection, type ConnectionState } from './hazelcast/hazelcast-connection';
export { type HazelcastConnectionOptions } from './hazelcast/hazelcast-connection.options';
export { ClusterSingleton, type ClusterSingletonDecorator, type ClusterSingletonReturnCheck } from './nest/permits/cluster-singleton.decorator';
export type { GatekeeperAdminOptions } from './nest/admin/gatekeeper-admin.options';
export { AdminTokenGuard } from './nest/admin/admin-token.guard';
export type { ClusterSingletonOptions } from './nest/permits/cluster-singleton.options';
export { GATEKEEPER_STORE } from './nest/gatekeeper.constants';

export { SemaphoreAdmin, type SemaphoreAdminOptions, type SemaphoreDefinitionPatch } from './permits/semaphore-admin';
export { type GroupMigrationReport, type MigrationChange, type MigrationSkip, type UndoMigrationReport } from './permits/group-migrations';
export { type GroupMigrationRequest, type MigrationSelection, type MigrationSkipCode, type UndoMigrationRequest } from './permits/group-migration.rules';

// Permits and decisions
export type { AcquireResult, PermitDenied, PermitGranted } from './permits/acquire-result';
export { PermitEngine } from './permits/permit.engine';
export { type DecideOptions, type PermitEngineOptions } from './permits/permit-engine.options';
export type { SemaphoreStatus } from './permits/semaphore-status';
export { semaphoreKind, type KindGuardOptions, type SemaphoreKind } from './permits/semaphore-kind';
export { PermitLease, type PermitLeaseOptions } from './permits/permit-lease';
export { PermitLostError } from './permits/errors/permit-lost.error';
export { DenyReason, TRANSIENT_DENIALS } from './permits/deny-reason';
export type { Holder, NodeIdentity, Permit } from './permits/permit';
export type { SemaphoreEntry } from './permits/semaphore-entry';
export type {
  DurationInput,
  GroupMigrationMemory,
  SemaphoreDefinition,
  SemaphoreDefinitionInput,
} from './permits/semaphore-definition';
export { validateDefinition } from './permits/definition.validator';
export { formatDuration, parseDuration } from './core/duration';
export { systemClock, type Clock } from './core/clock';

// Stores
export type { PermitStore, PermitStoreEvents, PermitStoreContext, VersionedEntry, CallOptions } from './permits/permit-store';
export type { ObservedEntry } from './permits/semaphore.view';
export { declareFreshCluster } from './hazelcast/hazelcast-partition-canaries';
export { MemoryPermitStore, MemoryStoreBackend } from './permits/memory-permit.store';
export { HazelcastPermitStore, type HazelcastStoreOptions } from './permits/hazelcast-permit.store';
export { ViewedPermitStore } from './permits/viewed-permit.store';
export { SemaphoreView } from './permits/semaphore.view';

// Errors
export { GatekeeperError } from './core/errors/gatekeeper.error';
export { InvalidDefinitionError } from './core/errors/invalid-definition.error';
export { InvalidOptionsError } from './core/errors/invalid-options.error';
export { UnknownSemaphoreError } from './permits/errors/unknown-semaphore.error';
export { PermitNotHeldError } from './permits/errors/permit-not-held.error';
export { PermitTimeoutError } from './permits/errors/permit-timeout.error';
export { StoreUnavailableError } from './core/errors/store-unavailable.error';
export { ClusterUnreachableError } from './core/errors/cluster-unreachable.error';
export { StoreTimeoutError } from './core/errors/store-timeout.error';
export { EditConflictError } from './core/errors/edit-conflict.error';
export { CorruptStateError } from './core/errors/corrupt-state.error';

// Allocation: resource sets spread evenly over the live nodes
export { AllocationService } from './nest/allocation/allocation.service';
export { AllocationLease, type ResourceLease } from './allocation/allocation-lease';
export { ManualAllocation, type ManualAllocationOptions, type ManualSlot } from './allocation/manual-allocation';
export { AllocationParticipant } from './allocation/allocation-participant';
export { allocationPermitsOf, type AllocationPermits } from './allocation/allocation-permits';
export { type AllocationHandlers, type AllocationParticipantOptions } from './allocation/allocation-participant.options';
export {
  ALLOCATION_SEMAPHORE_PREFIX, allocationSemaphore, type AllocationAnnex, type AllocationInput, type AllocationPlan, type RebalanceReason,
} from './allocation/allocation';
export { allocationStatus, type AllocationOwner, type AllocationStatus } from './allocation/allocation-status';
export { requestRebalance } from './allocation/allocation-admin';
export { manualSlice } from './allocation/allocation-plan.rules';
export { ResourceNotOwnedError } from './allocation/errors/resource-not-owned.error';
export { UnknownAllocationError } from './allocation/errors/unknown-allocation.error';

// Leased distributed tasks (seed 004)
export { TaskService } from './nest/tasks/task.service';
export { TaskHandler, GroupFinishedHandler, InvalidTaskHandler } from './nest/tasks/task-handler.decorator';
export { OncePerTrigger } from './nest/tasks/once-per-trigger.decorator';
export type { TasksOptions, TaskHandlerDecoratorOptions } from './nest/tasks/tasks.options';
export type { TaskContext, TaskHandlerOptions } from './tasks/task-handler';
export type { TaskWorkerOptions } from './tasks/task-worker.options';
export { TaskWorker } from './tasks/task-worker';
export type { TaskHandler as TaskHandlerFunction, GroupFinishedHandler as GroupFinishedHandlerFunction } from './tasks/task-handler';
export type {
  AttemptOutcome, BackoffPolicy, GroupJoinData, TaskAttempt, TaskClaim, TaskGroupPosition, TaskIdentity, TaskRecord, TaskState,
} from './tasks/task';
export type { TaskActor } from './tasks/task-claim.rules';
export type { SubmitInput } from './tasks/task-submit.rules';
export { taskId, joinTaskId, parentJoinTaskId } from './tasks/task-id.rules';
export { TaskAdmin, type TaskGroupStatus, type TaskPurgeOptions, type TaskStateCounts } from './tasks/task-admin';
export { parseTaskList, parseTaskPurge, type TaskListInput, type TaskPurgeInput } from './tasks/task-admin.input';
export type { TaskStore, TaskStoreEvents, TaskCallOptions, TaskQuery, VersionedTask, VersionedGroup } from './tasks/task-store';
export { MemoryTaskStore, MemoryTaskBackend } from './tasks/memory-task.store';
export { HazelcastTaskStore, type HazelcastTaskStoreOptions } from './tasks/hazelcast-task.store';
export { LeaseExpiredError } from './tasks/errors/lease-expired.error';
export { RetryLaterError } from './tasks/errors/retry-later.error';
export { InvalidTaskError } from './tasks/errors/invalid-task.error';
export { TaskActionRefusedError } from './tasks/errors/task-action-refused.error';
export { UnknownTaskError } from './tasks/errors/unknown-task.error';
export { InvalidTaskQueryError } from './tasks/errors/invalid-task-query.error';
export type { TaskEvent } from './tasks/task-events';

// Lifecycle events (rxjs always; @nestjs/event-emitter when the app has it)
export type { GatekeeperEvent, GatekeeperEventName } from './nest/observability/gatekeeper-events';
export { GatekeeperHealthIndicator, type GatekeeperHealthDetails, type GatekeeperHealthResult } from './nest/observability/gatekeeper-health.indicator';
