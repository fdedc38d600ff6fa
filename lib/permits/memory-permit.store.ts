import type { SemaphoreEntry } from './semaphore-entry';
import type { CallOptions, PermitStore, PermitStoreContext, PermitStoreEvents, VersionedEntry } from './permit-store';
import { decodeEntries, decodeEntry, encodeEntry } from './semaphore-entry.codec';
import { ViewedPermitStore } from './viewed-permit.store';

/**
 * The data behind one or more {@link MemoryPermitStore}s. Share one backend between stores to simulate several
 * nodes in a single process (e.g. in your own tests).
 */
export class MemoryStoreBackend {
  /** Encoded entries by semaphore name. */
  readonly entries = new Map<string, string>();
  private readonly stores = new Set<MemoryPermitStore>();

  /** Stores a raw value as is (for tests that plant values the library did not write). */
  writeRaw(name: string, raw: string): void {
    this.entries.set(name, raw);
    this.publish(name);
  }

  /** @internal */
  attach(store: MemoryPermitStore): void {
    this.stores.add(store);
  }

  /** @internal */
  detach(store: MemoryPermitStore): void {
    this.stores.delete(store);
  }

  /** @internal Tells every attached store that an entry changed, as Hazelcast's entry listener would. */
  publish(name: string): void {
    for (const store of this.stores) store.onBackendChange(name, this.entries.get(name) ?? null);
  }
}

/**
 * A store in this process's memory: for a single instance, local development and tests. Several stores can share
 * one {@link MemoryStoreBackend} to act as nodes of one cluster. Nothing is ever lost, so no recovery waits.
 */
export class MemoryPermitStore extends ViewedPermitStore implements PermitStore {
  private events: PermitStoreEvents = {};
  private connected = false;
  private operations = 0;

  constructor(private readonly backend: MemoryStoreBackend = new MemoryStoreBackend()) {
    super();
  }

  /** {@inheritDoc PermitStore.connect} */
  async connect({ events = {} }: PermitStoreContext): Promise<void> {
    this.events = events;
    this.backend.attach(this);
    for (const [name, raw] of this.backend.entries) this.view.observe(name, raw);
    this.connected = true;
  }

  /** {@inheritDoc PermitStore.close} */
  async close(): Promise<void> {
    this.backend.detach(this);
    this.view.clear();
    this.connected = false;
  }

  /** {@inheritDoc PermitStore.isConnected} */
  isConnected(): boolean {
    return this.connected;
  }

  /** {@inheritDoc PermitStore.memberCount} */
  memberCount(): number | undefined {
    return undefined;
  }

  /** {@inheritDoc PermitStore.read} */
  async read(name: string, _options?: CallOptions): Promise<VersionedEntry> {
    this.operations++;
    const raw = this.backend.entries.get(name) ?? null;
    this.view.observe(name, raw);
    return { raw, entry: raw === null ? undefined : decodeEntry(name, raw) };
  }

  /** {@inheritDoc PermitStore.compareAndSet} */
  async compareAndSet(name: string, expected: Pick<VersionedEntry, 'raw'>, next: SemaphoreEntry, _options?: CallOptions): Promise<boolean> {
    this.operations++;
    const current = this.backend.entries.get(name) ?? null;
    if (current !== expected.raw) return false;
    this.backend.entries.set(name, encodeEntry(next));
    this.backend.publish(name);
    return true;
  }

  /** {@inheritDoc PermitStore.list} */
  async list(_options?: CallOptions): Promise<Array<{ name: string; entry: SemaphoreEntry }>> {
    this.operations++;
    return decodeEntries(this.backend.entries, (key, reason) => this.events.corruptValue?.(key, reason));
  }

  /** {@inheritDoc PermitStore.readRaw} */
  async readRaw(name: string, _options?: CallOptions): Promise<string | null> {
    this.operations++;
    return this.backend.entries.get(name) ?? null;
  }

  /** @internal */
  protected reportUnreadable(name: string, reason: string): void {
    this.events.corruptValue?.(name, reason);
  }

  /** {@inheritDoc PermitStore.operationCount} */
  operationCount(): number {
    return this.operations;
  }

  /** @internal */
  onBackendChange(name: string, raw: string | null): void {
    const unreadable = this.view.observe(name, raw);
    if (unreadable) this.events.corruptValue?.(name, unreadable);
  }
}
