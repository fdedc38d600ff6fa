import type { TaskRecord } from '../store/tasks/task';

/**
 * What happened to a task on this node, as it happened: a claim, and how each run ended. `completed`, `retrying`,
 * `failed` and `invalid` are outcomes the store accepted (the fenced write landed); `rejected` is a run whose
 * outcome was not written because its lease was lost (another node may hold the task, and its outcome stands).
 */
export type TaskEvent =
  | { readonly kind: 'claimed'; readonly task: TaskRecord; readonly epoch: number }
  | { readonly kind: 'completed'; readonly task: TaskRecord; readonly epoch: number }
  | { readonly kind: 'retrying'; readonly task: TaskRecord; readonly epoch: number; readonly error: string }
  | { readonly kind: 'failed'; readonly task: TaskRecord; readonly epoch: number; readonly error: string }
  | { readonly kind: 'invalid'; readonly task: TaskRecord; readonly epoch: number; readonly error: string }
  | { readonly kind: 'rejected'; readonly id: string; readonly epoch: number; readonly reason: string }
  | { readonly kind: 'handed-back'; readonly id: string; readonly epoch: number };
