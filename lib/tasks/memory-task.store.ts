import type { TaskGroupRecord, TaskRecord } from './task';
import { decodeGroup, decodeTask, encodeGroup, encodeTask } from './task.codec';
import type { ClaimWatch, TaskCallOptions, TaskQuery, TaskStore, TaskStoreEvents, TaskWatcher, VersionedGroup, VersionedTask } from './task-store';
import { inClaimOrder, isClaimable, isFinishedBefore, matchesQuery } from './task-store.queries';

/** The shared state of memory task stores: one per "cluster" (give the same backend to stores of one process). */
export class MemoryTaskBackend {
  /** @internal */ readonly tasks = new Map<string, string>();
  /** @internal */ readonly groups = new Map<string, string>();
  /** @internal */ readonly listeners = new Set<TaskWatcher>();
}

/** Tasks in this process's memory (one instance, development, tests). Passes the same contract as the Hazelcast store. */
export class MemoryTaskStore implements TaskStore {
  private operations = 0;
  private readonly own = new Set<TaskWatcher>();

  constructor(private readonly backend: MemoryTaskBackend = new MemoryTaskBackend()) {}

  /** {@inheritDoc TaskStore.connect} */
  async connect(_events?: TaskStoreEvents): Promise<void> {}

  /** {@inheritDoc TaskStore.close} */
  async close(): Promise<void> {
    for (const listener of this.own) this.backend.listeners.delete(listener);
    this.own.clear();
  }

  /** {@inheritDoc TaskStore.read} */
  async read(id: string, _options?: TaskCallOptions): Promise<VersionedTask> {
    this.operations++;
    const raw = this.backend.tasks.get(id) ?? null;
    return { raw, task: raw === null ? undefined : decodeTask(id, raw) };
  }

  /** {@inheritDoc TaskStore.compareAndSet} */
  async compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, _options?: TaskCallOptions): Promise<boolean> {
    this.operations++;
    if ((this.backend.tasks.get(id) ?? null) !== expected.raw) return false;
    if (next === null) this.backend.tasks.delete(id);
    else this.backend.tasks.set(id, encodeTask(next));
    if (next?.state === 'pending' || next?.state === 'running') {
      // Pending work for every watch; claims (running) only for those that asked (see `watch`).
      const task = decodeTask(id, this.backend.tasks.get(id)!);
      for (const listener of [...this.backend.listeners]) listener(next.type, id, task);
    }
    return true;
  }

  /** {@inheritDoc TaskStore.readGroup} */
  async readGroup(id: string, _options?: TaskCallOptions): Promise<VersionedGroup> {
    this.operations++;
    const raw = this.backend.groups.get(id) ?? null;
    return { raw, group: raw === null ? undefined : decodeGroup(id, raw) };
  }

  /** {@inheritDoc TaskStore.compareAndSetGroup} */
  async compareAndSetGroup(id: string, expected: Pick<VersionedGroup, 'raw'>, next: TaskGroupRecord | null, _options?: TaskCallOptions): Promise<boolean> {
    this.operations++;
    if ((this.backend.groups.get(id) ?? null) !== expected.raw) return false;
    if (next === null) this.backend.groups.delete(id);
    else this.backend.groups.set(id, encodeGroup(next));
    return true;
  }

  /** {@inheritDoc TaskStore.claimable} */
  async claimable(types: readonly string[], now: number, lapsedBefore: number, limit: number, _options?: TaskCallOptions): Promise<TaskRecord[]> {
    this.operations++;
    const wanted = new Set(types);
    return inClaimOrder(this.all().filter((t) => isClaimable(t, wanted, now, lapsedBefore)), limit);
  }

  /** {@inheritDoc TaskStore.uncounted} */
  async uncounted(types: readonly string[], limit: number, _options?: TaskCallOptions): Promise<TaskRecord[]> {
    this.operations++;
    return inClaimOrder(this.all().filter((t) => t.uncounted && types.includes(t.type)), limit);
  }

  /** {@inheritDoc TaskStore.finishedBefore} */
  async finishedBefore(before: number, limit: number, _options?: TaskCallOptions): Promise<TaskRecord[]> {
    this.operations++;
    return inClaimOrder(this.all().filter((t) => isFinishedBefore(t, before)), limit);
  }

  /** {@inheritDoc TaskStore.query} */
  async query(query: TaskQuery, _options?: TaskCallOptions): Promise<TaskRecord[]> {
    this.operations++;
    return inClaimOrder(this.all().filter((t) => matchesQuery(t, query)));
  }

  /** {@inheritDoc TaskStore.watch} */
  watch(listener: TaskWatcher, types?: readonly string[], claims?: ClaimWatch): () => void {
    const wanted = types && new Set(types);
    const filtered: TaskWatcher = (type, id, task) => {
      if (wanted && !wanted.has(type)) return;
      if (task?.state !== 'running') listener(type, id, task);
      else if (task.claim && task.claim.instance !== claims?.except) claims?.listener(type, id, task.claim);
    };
    this.backend.listeners.add(filtered);
    this.own.add(filtered);
    return () => {
      this.backend.listeners.delete(filtered);
      this.own.delete(filtered);
    };
  }

  /** {@inheritDoc TaskStore.listening} */
  listening(): Promise<void> {
    return Promise.resolve();
  }

  /** {@inheritDoc TaskStore.operationCount} */
  operationCount(): number {
    return this.operations;
  }

  private all(): TaskRecord[] {
    return [...this.backend.tasks].map(([id, raw]) => decodeTask(id, raw));
  }
}
