import { decodeRequest, encodeRequest, type RunRequest } from './run-request';
import type { RunRequestStore, StoredRequest } from './run-request-store';

/** The shared state of memory request stores: one per "cluster". */
export class MemoryRunRequestBackend {
  /** @internal */ readonly requests = new Map<string, string>();
  /** @internal */ readonly listeners = new Set<(request: RunRequest) => void>();
}

/** "Run now" requests in this process's memory (one instance, development, tests). */
export class MemoryRunRequestStore implements RunRequestStore {
  private heard?: (request: RunRequest) => void;

  constructor(private readonly backend: MemoryRunRequestBackend = new MemoryRunRequestBackend()) {}

  async connect(heard: (request: RunRequest) => void): Promise<void> {
    this.heard = heard;
    this.backend.listeners.add(heard);
  }

  async close(): Promise<void> {
    if (this.heard) this.backend.listeners.delete(this.heard);
  }

  async create(request: RunRequest): Promise<boolean> {
    if (this.backend.requests.has(request.id)) return false;
    this.write(request);
    return true;
  }

  async read(id: string): Promise<StoredRequest | undefined> {
    const raw = this.backend.requests.get(id);
    return raw === undefined ? undefined : { raw, request: decodeRequest(id, raw) };
  }

  async compareAndSet(id: string, expected: StoredRequest, next: RunRequest): Promise<boolean> {
    if (this.backend.requests.get(id) !== expected.raw) return false;
    this.write(next);
    return true;
  }

  async remove(id: string): Promise<void> {
    this.backend.requests.delete(id);
  }

  private write(request: RunRequest): void {
    this.backend.requests.set(request.id, encodeRequest(request));
    // Events arrive later than the write, as the cluster's do.
    for (const listener of this.backend.listeners) queueMicrotask(() => listener(request));
  }
}
