/**
 * What an application's own tests need: in-memory stores to share between several modules in one process (each
 * module a simulated node), a clock that moves only when told to, `declareFreshCluster` for tests that start
 * a fresh Hazelcast member, and the public contract suite a backend passes (`describeStoreContracts`).
 *
 * @packageDocumentation
 */

export { MemoryPermitStore, MemoryStoreBackend } from './backends/memory/permits/memory-permit.store';
export { MemoryPresenceStore, MemoryPresenceBackend } from './backends/memory/presence/memory-presence.store';
export { MemoryTaskStore, MemoryTaskBackend } from './backends/memory/tasks/memory-task.store';
export { MemoryHistoryStore, MemoryHistoryBackend } from './backends/memory/schedules/memory-history.store';
export { MemoryScheduleStore, MemoryScheduleBackend } from './backends/memory/schedules/memory-schedule.store';
export { ManualClock, type Clock } from './core/clock';
export { declareFreshCluster } from './backends/hazelcast/hazelcast-partition-canaries';

// What the memory stores implement and name (also exported from the root, where the module's options name them)
export type { SemaphoreEntry } from './permits/semaphore-entry';
export type { ObservedEntry } from './permits/semaphore.view';
export type { Presence } from './presence/presence';
export type {
  AttemptOutcome, GroupEnd, SubgroupProgress, TaskAttempt, TaskClaim, TaskGroupPosition, TaskGroupRecord, TaskRecord, TaskState,
} from './tasks/task';
export type { GroupMigrationMemory, SemaphoreDefinition } from './permits/semaphore-definition';
export type { NodeIdentity, Permit } from './permits/permit';
export type { PermitStore, PermitStoreEvents, PermitStoreContext, VersionedEntry, CallOptions, WriteOptions } from './permits/permit-store';
export type { PresenceStore, PresenceStoreEvents, PresenceCallOptions } from './presence/presence-store';
export type { HistoryStore, StoredHistory } from './schedules/history-store';
export type { ScheduleStore, ScheduleStoreEvents, ScheduleCallOptions, ScheduleListOptions, ScheduleWatcher, VersionedSchedule } from './schedules/schedule-store';
export type { ScheduleRecord } from './schedules/schedule-record';
export type { ScheduleDefinition, JsonValue, MissedRunPolicy, OverlapPolicy } from './schedules/schedule-definition';
export type { HistoryDelta, JobHistory, NodeTicks, RunCounts } from './schedules/job-history';
export type { RunRecord, RunTrigger, JobRunOutcome } from './schedules/run-record';
export type { TaskStore, TaskStoreEvents, TaskCallOptions, TaskQuery, TaskWatcher, ClaimWatch, ClaimWatcher, VersionedTask, VersionedGroup } from './tasks/task-store';

// The store contract: the backends, and the suites every backend passes (describeStoreContracts runs them all)
export { MemoryBackend } from './backends/memory/memory-backend';
export { MemoryRecords, type MemoryWatcher } from './backends/memory/memory-records';
export { PermitRecordStore } from './permits/permit-record.store';
export { TaskRecordStore } from './tasks/task-record.store';
export { PresenceRecordStore } from './presence/presence-record.store';
export { HistoryRecordStore } from './schedules/history-record.store';
export { ScheduleRecordStore } from './schedules/schedule-record.store';
export { describeStoreContracts } from './testing/store-contracts';
export { describeBackendContract, type BackendContractFixture } from './testing/backend-contract';
export { describePermitStoreContract, type PermitStoreFixture } from './testing/permit-store.contract';
export { describePresenceStoreContract, type PresenceStoreFixture } from './testing/presence-store.contract';
export { describeHistoryStoreContract, type HistoryStoreFixture } from './testing/history-store.contract';
export { describeScheduleStoreContract, type ScheduleStoreFixture } from './testing/schedule-store.contract';
export { describeTaskStoreContract, type TaskStoreFixture } from './testing/task-store.contract';
export { describeRankedClaimsContract, type RankedClaimsFixture } from './testing/task-store-ranks.contract';
export { describeTaskBacklogContract, type TaskBacklogFixture, type ClaimQueryReads, type BacklogQuery } from './testing/task-store-backlog.contract';
export type { ContractOptions, TestApi } from './testing/test-api';
export type { StoreBackend, StoreBackendEvents } from './store/store-backend';
export {
  writtenByMark, type MissedReason, type RecordCallOptions, type RecordChanges, type RecordMap, type RecordMapSpec, type RecordWriteOptions,
  type StoredRecord, type Unwatch, type WatchOptions,
} from './store/record-map';
export type { Counters, CounterValue } from './store/counter';
