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
} from './nest/gatekeeper.service';
export { ClusterSingleton, type ClusterSingletonDecorator, type ClusterSingletonReturnCheck } from './nest/cluster-singleton.decorator';
export type { GatekeeperAdminOptions } from './nest/admin/gatekeeper-admin.options';
export { AdminTokenGuard } from './nest/admin/admin-token.guard';
export type { ClusterSingletonOptions } from './nest/cluster-singleton.options';
export { GATEKEEPER_STORE } from './nest/gatekeeper.constants';

export {
  SemaphoreAdmin, type GroupMigrationReport, type GroupMigrationRequest, type MigrationChange, type MigrationSelection,
  type MigrationSkip, type MigrationSkipCode, type SemaphoreAdminOptions, type SemaphoreDefinitionPatch, type UndoMigrationReport,
  type UndoMigrationRequest,
} from './admin/semaphore-admin';

// Permits and decisions
export type { AcquireResult, PermitDenied, PermitGranted } from './engine/acquire-result';
export { PermitEngine, type DecideOptions, type PermitEngineOptions } from './engine/permit.engine';
export type { SemaphoreStatus } from './engine/semaphore-status';
export { PermitLease, PermitLostError, type PermitLeaseOptions } from './engine/permit-lease';
export { DenyReason, TRANSIENT_DENIALS } from './gatekeeper/deny-reason';
export type { Holder, NodeIdentity, Permit } from './gatekeeper/permit';
export type { SemaphoreEntry } from './gatekeeper/semaphore-entry';
export type {
  DurationInput,
  GroupMigrationMemory,
  SemaphoreDefinition,
  SemaphoreDefinitionInput,
} from './gatekeeper/semaphore-definition';
export { validateDefinition } from './gatekeeper/definition.validator';
export { formatDuration, parseDuration } from './gatekeeper/duration';
export { systemClock, type Clock } from './gatekeeper/clock';

// Stores
export type { PermitStore, PermitStoreEvents, PermitStoreContext, VersionedEntry, CallOptions } from './store/permit-store';
export type { ObservedEntry } from './store/semaphore.view';
export { declareFreshCluster } from './store/hazelcast-partition-canaries';
export { MemoryPermitStore, MemoryStoreBackend } from './store/memory-permit.store';
export { HazelcastPermitStore, type HazelcastStoreOptions } from './store/hazelcast-permit.store';
export { ViewedPermitStore } from './store/viewed-permit.store';
export { SemaphoreView } from './store/semaphore.view';

// Errors
export { GatekeeperError } from './errors/gatekeeper.error';
export { InvalidDefinitionError } from './errors/invalid-definition.error';
export { InvalidOptionsError } from './errors/invalid-options.error';
export { UnknownSemaphoreError } from './errors/unknown-semaphore.error';
export { PermitNotHeldError } from './errors/permit-not-held.error';
export { PermitTimeoutError } from './errors/permit-timeout.error';
export { StoreUnavailableError } from './errors/store-unavailable.error';
export { StoreTimeoutError } from './errors/store-timeout.error';
export { EditConflictError } from './errors/edit-conflict.error';
export { CorruptStateError } from './errors/corrupt-state.error';
