import type { RunRequest } from './run-request';

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
}
