import type { StoreBackend } from '../store-backend';
import type { TaskStore } from './task-store';

/** The task store `backend` offers of its own ({@link StoreBackend.taskStore}), or `undefined` when it offers none. */
export function ownTaskStore(backend: StoreBackend): TaskStore | undefined {
  return typeof backend.taskStore === 'function' ? backend.taskStore() : undefined;
}
