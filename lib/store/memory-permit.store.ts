import type { PermitState } from '../gatekeeper/permit';
import type { SemaphoreDefinition } from '../gatekeeper/semaphore-definition';
import {
  decodeDefinition, decodePermitState, decodePermitStates, encodeDefinition, encodePermitState,
} from './permit-state.codec';
import type { PermitStore, PermitStoreEvents, VersionedPermitState } from './permit-store';

/**
 * The data behind one or more {@link MemoryPermitStore}s. Share one backend between stores to simulate several
 * nodes in a single process (e.g. in your own tests).
 */
export class MemoryStoreBackend {
  /** Encoded definitions by name. */
  readonly definitions = new Map<string, string>();
  /** Encoded permit states by semaphore name. */
  readonly permits = new Map<string, string>();
  private readonly stores = new Set<MemoryPermitStore>();

  /** @internal */
  attach(store: MemoryPermitStore): void {
    this.stores.add(store);
  }

  /** @internal */
  detach(store: MemoryPermitStore): void {
    this.stores.delete(store);
  }

  /** @internal Tells every attached store that a definition changed, as Hazelcast's entry listener would. */
  publish(name: string): void {
    for (const store of this.stores) store.onBackendChange(name);
  }
}

/**
 * An in-process store: for a single-instance app, local development and unit tests. It keeps the same encoded
 * values and compare-and-set semantics as the Hazelcast store, so code tested against it behaves the same.
 */
export class MemoryPermitStore implements PermitStore {
  private events: PermitStoreEvents = {};
  private cache = new Map<string, SemaphoreDefinition>();
  private connected = false;
  private operations = 0;

  constructor(private readonly backend: MemoryStoreBackend = new MemoryStoreBackend()) {}

  async connect(events: PermitStoreEvents = {}): Promise<void> {
    this.events = events;
    this.backend.attach(this);
    this.cache = new Map();
    for (const name of this.backend.definitions.keys()) this.load(name);
    this.connected = true;
  }

  async close(): Promise<void> {
    this.backend.detach(this);
    this.connected = false;
  }

  isConnected(): boolean {
    return this.connected;
  }

  memberCount(): number | undefined {
    return undefined;
  }

  getDefinition(name: string): SemaphoreDefinition | undefined {
    return this.cache.get(name);
  }

  async readDefinition(name: string): Promise<SemaphoreDefinition | undefined> {
    const raw = this.backend.definitions.get(name);
    return raw === undefined ? undefined : decodeDefinition(name, raw);
  }

  listDefinitions(): SemaphoreDefinition[] {
    return [...this.cache.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  async saveDefinition(definition: SemaphoreDefinition, { ifAbsent = false } = {}): Promise<boolean> {
    if (ifAbsent && this.backend.definitions.has(definition.name)) return false;
    this.backend.definitions.set(definition.name, encodeDefinition(definition));
    this.backend.publish(definition.name);
    return true;
  }

  async deleteDefinition(name: string): Promise<boolean> {
    const existed = this.backend.definitions.delete(name);
    if (existed) this.backend.publish(name);
    return existed;
  }

  async readPermitState(name: string): Promise<VersionedPermitState> {
    this.operations++;
    const raw = this.backend.permits.get(name) ?? null;
    return { raw, state: raw === null ? undefined : decodePermitState(name, raw) };
  }

  async compareAndSetPermitState(name: string, expected: VersionedPermitState, next: PermitState): Promise<boolean> {
    this.operations++;
    const current = this.backend.permits.get(name) ?? null;
    if (current !== expected.raw) return false;
    this.backend.permits.set(name, encodePermitState(next));
    return true;
  }

  async listPermitStates(): Promise<Array<{ name: string; state: PermitState }>> {
    return decodePermitStates(this.backend.permits, (key, reason) => this.events.corruptValue?.(key, reason));
  }

  async resetPermitState(name: string, state: PermitState): Promise<void> {
    this.operations++;
    this.backend.permits.set(name, encodePermitState(state));
  }

  /** In one process the data itself is at hand: peeking is reading, without the call. */
  peekPermitState(name: string): VersionedPermitState | undefined {
    const raw = this.backend.permits.get(name);
    if (raw === undefined) return undefined;
    try {
      return { raw, state: decodePermitState(name, raw) };
    } catch {
      return undefined;
    }
  }

  operationCount(): number {
    return this.operations;
  }

  /** @internal */
  onBackendChange(name: string): void {
    this.load(name);
    this.events.definitionChanged?.({ name, definition: this.cache.get(name) });
  }

  private load(name: string): void {
    const raw = this.backend.definitions.get(name);
    if (raw === undefined) {
      this.cache.delete(name);
      return;
    }
    try {
      this.cache.set(name, decodeDefinition(name, raw));
    } catch (error) {
      this.cache.delete(name);
      this.events.corruptValue?.(name, (error as Error).message);
    }
  }
}
