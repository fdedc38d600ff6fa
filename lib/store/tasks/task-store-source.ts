import type { StoreBackend } from '../store-backend';
import type { TaskStore } from './task-store';

/**
 * A backend's faster path for tasks: a task store of its own, offered beside the store contract (PostgreSQL: a table
 * with claims found on its indexes, `FOR UPDATE SKIP LOCKED`; Redis: sorted sets kept by its write scripts;
 * Hazelcast: member-side claim queries and a filtered listener). A `StoreBackend` that also has this member is found
 * by it (never by its class): without it the module keeps tasks in records of that backend (the contract's default
 * task store).
 */
export interface TaskStoreSource {
  /**
   * The backend's own task store. Called once per module whose tasks are on this backend; what it returns must pass
   * `describeTaskStoreContract` (from `nestjs-gatekeeper/testing`) and keep its calls to this backend's deadline.
   */
  taskStore(): TaskStore;
}

/** The task store `backend` offers of its own ({@link TaskStoreSource}), or `undefined` when it offers none. */
export function ownTaskStore(backend: StoreBackend): TaskStore | undefined {
  const offer = (backend as Partial<TaskStoreSource>).taskStore;
  return typeof offer === 'function' ? offer.call(backend) : undefined;
}
