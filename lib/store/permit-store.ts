import type { PermitState } from '../gatekeeper/permit';
import type { SemaphoreDefinition } from '../gatekeeper/semaphore-definition';

/** A semaphore's permit state as read, with what the store needs to compare-and-set against it. */
export interface VersionedPermitState {
  /** The decoded state, or `undefined` when nothing was ever written for this semaphore. */
  readonly state: PermitState | undefined;
  /** The exact stored value the state was decoded from (`null` if absent). Opaque to callers. */
  readonly raw: string | null;
}

/** A change to a definition seen by the store (from this node or another). */
export interface DefinitionChange {
  /** The semaphore's name. */
  readonly name: string;
  /** The new definition, or `undefined` when it was removed. */
  readonly definition: SemaphoreDefinition | undefined;
}

/** Events the store reports to whoever owns it. */
export interface PermitStoreEvents {
  /** The store lost its connection; operations fail until {@link PermitStoreEvents.reconnected}. */
  disconnected?(): void;
  /**
   * The connection came back. `freshCluster` is true when the cluster lost its data (a full restart): the owner
   * should put its definitions back before resolving; if it throws, the store asks again after the next success.
   */
  reconnected?(freshCluster: boolean): void | Promise<void>;
  /** A definition was added, changed or removed. */
  definitionChanged?(change: DefinitionChange): void;
  /** A stored value could not be decoded and was skipped. */
  corruptValue?(key: string, reason: string): void;
}

/**
 * Where definitions and permit states live. Implementations: {@link HazelcastPermitStore} (the cluster) and
 * {@link MemoryPermitStore} (one process). Both pass the same contract suite.
 *
 * Reads of definitions are served from a local cache that the store keeps current; permit states are always read
 * from the store and written only by compare-and-set.
 */
export interface PermitStore {
  /** Connects and loads the definition cache. Called once by the owner before any other call. */
  connect(events?: PermitStoreEvents): Promise<void>;
  /** Disconnects; releases only what the store itself created (an injected client is left open). */
  close(): Promise<void>;
  /** Whether the store is connected right now. */
  isConnected(): boolean;
  /** How many cluster members the store can see now, or `undefined` when it has no cluster (memory). */
  memberCount(): number | undefined;

  /** The cached definition with this name. */
  getDefinition(name: string): SemaphoreDefinition | undefined;
  /** Reads a definition from the store itself, not the cache: for read-modify-write edits. */
  readDefinition(name: string): Promise<SemaphoreDefinition | undefined>;
  /** Every cached definition, sorted by name. */
  listDefinitions(): SemaphoreDefinition[];
  /** Writes a definition. With `ifAbsent`, keeps an existing one and returns false. */
  saveDefinition(definition: SemaphoreDefinition, options?: { ifAbsent?: boolean }): Promise<boolean>;
  /** Removes a definition; returns whether one existed. Permit state is kept so fencing tokens never go back. */
  deleteDefinition(name: string): Promise<boolean>;

  /** Reads one semaphore's permit state. Throws {@link CorruptStateError} if it cannot be decoded. */
  readPermitState(name: string): Promise<VersionedPermitState>;
  /**
   * Writes `next` only if the stored value is still `expected` (compare-and-set). Returns false on conflict.
   * If the write's outcome is unknown (connection lost mid-call), settles it by re-reading; throws
   * {@link StoreUnavailableError} when it cannot.
   */
  compareAndSetPermitState(name: string, expected: VersionedPermitState, next: PermitState): Promise<boolean>;
  /** Every semaphore's permit state. Unreadable entries are reported via `corruptValue` and skipped. */
  listPermitStates(): Promise<Array<{ name: string; state: PermitState }>>;
  /** Overwrites a semaphore's permit state unconditionally: the operator's repair for a corrupt value. */
  resetPermitState(name: string, state: PermitState): Promise<void>;

  /**
   * The newest permit state this node has seen without asking the store (from its reads, writes and the
   * cluster's events), or `undefined`. Good for decisions that are safe on slightly old news (a deny), never for
   * a write, which must compare-and-set against it.
   */
  peekPermitState(name: string): VersionedPermitState | undefined;
  /** How many calls this store has made to its backend so far (round trips, for the Hazelcast store). */
  operationCount(): number;
}
