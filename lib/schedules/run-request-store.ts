import type { Deadline } from '../core/deadline';
import type { RunRequest } from './run-request';

/** What one decision of {@link RunRequestStore.update} wants done: its result, and the request's next value if any. */
export interface RequestDecision<R> {
  readonly result: R;
  /** The request's next value; absent: nothing is written and `result` stands. */
  readonly next?: RunRequest;
}

/** A request as read, with the exact stored text a compare-and-set names. */
export interface StoredRequest {
  readonly request: RunRequest;
  readonly raw: string;
}

/** Where "run now" requests wait for a node: written by compare-and-set, heard by every node. */
export interface RunRequestStore {
  /** Opens the store; `heard` gets every request written (by any node) from then on. */
  connect(heard: (request: RunRequest) => void): Promise<void>;
  close(): Promise<void>;
  /** Writes a new request; false when its id is taken. */
  create(request: RunRequest, timeoutMs?: number): Promise<boolean>;
  read(id: string, timeoutMs?: number): Promise<StoredRequest | undefined>;
  /** Writes `next` if the request is still the text of `expected`. */
  compareAndSet(id: string, expected: StoredRequest, next: RunRequest, timeoutMs?: number): Promise<boolean>;
  remove(id: string): Promise<void>;
  /**
   * Read, decide, compare-and-set, and on a conflict read and decide again (the store's one bounded loop), within
   * `attempts` and `deadline`; throws `WriteConflictError` when every attempt lost.
   */
  update<R>(id: string, decide: (current: RunRequest | undefined) => RequestDecision<R>, bounds: { attempts: number; deadline: Deadline }): Promise<R>;
}
