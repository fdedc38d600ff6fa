import type { Presence } from './presence';
import { encodePresence, PresenceReader } from './presence.codec';
import type { PresenceCallOptions, PresenceStore, PresenceStoreEvents } from './presence-store';

/** The presence entries behind one or more {@link MemoryPresenceStore}s (share one to simulate several nodes). */
export class MemoryPresenceBackend {
  /** Encoded entries by instance id. */
  readonly entries = new Map<string, string>();
  private readonly listeners = new Set<(instance: string, raw: string | null) => void>();

  /** Stores a raw value as is (for tests that plant values the library did not write). */
  writeRaw(instance: string, raw: string | null): void {
    if (raw === null) this.entries.delete(instance);
    else this.entries.set(instance, raw);
    for (const listener of this.listeners) listener(instance, raw);
  }

  /** Hears every change; returns the unsubscribe. */
  subscribe(listener: (instance: string, raw: string | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Presence in this process's memory: one instance, development and tests. */
export class MemoryPresenceStore implements PresenceStore {
  private events: PresenceStoreEvents = {};
  private readonly reader = new PresenceReader(() => this.events.corruptValue?.bind(this.events));
  private readonly watchers = new Set<(instance: string, presence: Presence | null) => void>();
  private unsubscribe?: () => void;
  private operations = 0;

  constructor(private readonly backend: MemoryPresenceBackend = new MemoryPresenceBackend()) {}

  /** {@inheritDoc PresenceStore.connect} */
  async connect(events: PresenceStoreEvents = {}): Promise<void> {
    this.events = events;
    this.unsubscribe = this.backend.subscribe((instance, raw) => this.notify(instance, raw));
  }

  /** {@inheritDoc PresenceStore.close} */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** {@inheritDoc PresenceStore.announce} */
  async announce(presence: Presence, _options?: PresenceCallOptions): Promise<void> {
    this.operations++;
    this.backend.writeRaw(presence.instance, encodePresence(presence));
  }

  /** {@inheritDoc PresenceStore.withdraw} */
  async withdraw(instance: string, _options?: PresenceCallOptions): Promise<void> {
    this.operations++;
    if (this.backend.entries.has(instance)) this.backend.writeRaw(instance, null);
  }

  /** {@inheritDoc PresenceStore.list} */
  async list(_options?: PresenceCallOptions): Promise<Presence[]> {
    this.operations++;
    return [...this.backend.entries].flatMap(([instance, raw]) => this.read(instance, raw));
  }

  /** {@inheritDoc PresenceStore.watch} */
  watch(listener: (instance: string, presence: Presence | null) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  /** {@inheritDoc PresenceStore.operationCount} */
  operationCount(): number {
    return this.operations;
  }

  private notify(instance: string, raw: string | null): void {
    const presence = raw === null ? null : (this.read(instance, raw)[0] ?? null);
    for (const watcher of this.watchers) watcher(instance, presence);
  }

  private read(instance: string, raw: string): Presence[] {
    return this.reader.read(instance, raw);
  }
}
