/**
 * What an application's own tests and a backend's author need: one memory backend (one instance shared by several
 * modules in one process acts as a cluster, each module a node), a clock that moves only when told to, and the
 * public contract suite every backend passes (`describeStoreContracts`), with the store contract it checks.
 *
 * @packageDocumentation
 */

// The memory backend and the test clock
export { MemoryBackend, type MemoryBackendOptions } from './backends/memory/memory-backend';
export { MemoryRecords, type MemoryWatcher } from './backends/memory/memory-records';
export { ManualClock, type Clock } from './core/clock';

// The suites a backend passes: describeStoreContracts runs them all; a backend's own task store (StoreBackend.taskStore)
// passes the task store's suites
export { describeStoreContracts } from './testing/store-contracts';
export { describeBackendContract, type BackendContractFixture } from './testing/backend-contract';
export { describeTaskStoreContract, type TaskStoreFixture } from './testing/task-store.contract';
export { describeRankedClaimsContract, type RankedClaimsFixture } from './testing/task-store-ranks.contract';
export { describeTaskBacklogContract, type TaskBacklogFixture, type ClaimQueryReads, type BacklogQuery } from './testing/task-store-backlog.contract';
export type { ContractOptions, TestApi } from './testing/test-api';

// The store contract they check (also in the root entry)
export type { StoreBackend } from './store/store-backend';
export type { ConnectTarget } from './store/connect-failure';
export type { NewStoreReport } from './store/new-store-report';
export type { NewStoreRules } from './store/new-store-rules';
export {
  writtenByMark, type MissedReason, type RecordCallOptions, type RecordChanges, type RecordMap, type RecordMapSpec, type RecordWriteOptions,
  type StoredRecord, type WatchOptions,
} from './store/record-map';
export type { Counters } from './store/counter';
export type { TaskStore, TaskQuery, VersionedTask, VersionedGroup } from './store/tasks/task-store';
export type { SqlTransaction, TransactionRecords } from './store/sql-transaction';
export type {
  AttemptOutcome, GroupEnd, SubgroupProgress, TaskAttempt, TaskClaim, TaskGroupPosition, TaskGroupRecord, TaskRecord, TaskState,
} from './store/tasks/task';
