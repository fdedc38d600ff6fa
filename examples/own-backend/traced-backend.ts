import type { Counters, RecordMap, RecordMapSpec, StoreBackend, TaskStore } from 'nestjs-gatekeeper';

/**
 * A backend of your own: here one that counts the maps each capability opens and hands every call to another backend
 * (yours would talk to its store). The whole seam is `StoreBackend` (its `node` is optional); a faster path for tasks
 * is its optional `taskStore()`, only passed on here.
 */
export class TracedBackend implements StoreBackend {
  readonly kind = 'traced';
  /** How many times each map was opened. */
  readonly opened = new Map<string, number>();

  constructor(private readonly inner: StoreBackend) {}

  open(): Promise<void> {
    return this.inner.open();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  map(name: string, spec?: RecordMapSpec): Promise<RecordMap> {
    this.opened.set(name, (this.opened.get(name) ?? 0) + 1);
    return this.inner.map(name, spec);
  }

  counters(): Promise<Counters> {
    return this.inner.counters();
  }

  memberCount(): number | undefined {
    return this.inner.memberCount();
  }

  isConnected(): boolean {
    return this.inner.isConnected();
  }

  operationCount(): number {
    return this.inner.operationCount();
  }

  /** Only where the inner backend has a task store of its own: else the library keeps tasks in records of this one. */
  get taskStore(): (() => TaskStore) | undefined {
    const inner = this.inner;
    return inner.taskStore && (() => inner.taskStore!());
  }
}
