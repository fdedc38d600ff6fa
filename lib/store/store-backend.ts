import type { SqlTransaction, TransactionRecords } from './sql-transaction';
import type { Counters } from './counter';
import type { ConnectTarget } from './connect-failure';
import type { NewStoreReport } from './new-store-report';
import type { NewStoreRules } from './new-store-rules';
import type { RecordMap, RecordMapSpec } from './record-map';
import type { TaskStore } from './tasks/task-store';

/**
 * One store every capability keeps its state in: the backend contract. A backend implements these primitives once
 * (versioned record maps with a change feed, counters that never go back, the store's clock where it has one, lost
 * data told by {@link RecordMap.lostSince} and the feed's `missed('lost-data')`, and one call policy: every call with
 * a deadline, every failure mapped to `StoreUnavailableError`); the capabilities' stores are written once over them.
 *
 * A backend instance is one node's connection: share one between the capabilities of a process, never between
 * processes. `nestjs-gatekeeper/testing`'s `describeStoreContracts` is the suite every backend passes: the primitives,
 * and every capability store built on them. A backend with a faster path for tasks offers it beside the contract,
 * as its {@link StoreBackend.taskStore}.
 */
export interface StoreBackend {
  /** What the backend is, for logs and errors (`'hazelcast'`, `'memory'`, `'postgres'`). */
  readonly kind: string;
  /** Connects (idempotent: a second caller shares the first's connection until every caller closed). */
  open(): Promise<void>;
  /** Lets go of one {@link StoreBackend.open}; the last one disconnects what the backend itself created. */
  close(): Promise<void>;
  /** Opens the map `name` (the backend adds its own prefix). The backend must be open. */
  map(name: string, spec?: RecordMapSpec): Promise<RecordMap>;
  /** The backend's counters. The backend must be open. */
  counters(): Promise<Counters>;
  /** The store's own clock (epoch ms) where it has one (PostgreSQL `clock_timestamp()`, Redis `TIME`); `undefined`: none. */
  now?(): Promise<number>;
  /**
   * Hears the readings of the store's clock that the backend's own calls bring back (the change feed's check of
   * itself): the store's time (epoch ms, rounded down, as `now()` answers) read at some moment after `sentAt`
   * (`performance.now()`), told as the answer comes. A `StoreClock` takes them as its own readings and then reads the
   * clock itself only when none came for a while. Optional; returns what stops it.
   */
  onClockReading?(listener: (storeMs: number, sentAt: number) => void): () => void;
  /**
   * How many members of a clustered store this node sees now (quorum checks); `undefined` for a store that is not a
   * cluster of members.
   */
  memberCount(): number | undefined;
  /** Whether the backend is connected right now. */
  isConnected(): boolean;
  /**
   * Whether the change feed of this backend's maps tells every loss of events with `missed(reason)`, so that a view
   * fed by it needs re-reading only when told. Optional: a backend without it, or answering `false`, is taken to lose
   * events without telling, and its views re-read every 5 s as well. Read once the backend is open.
   */
  readonly feedTellsEveryLoss?: boolean;
  /** How many calls the backend made so far (round trips: the benchmarks and the tests of a quiet steady state). */
  operationCount(): number;
  /**
   * For a backend that is a whole cluster in one process (the memory backend of tests): one node's connection to it.
   * A module given this backend calls it once and runs every capability on that backend on what it returns, so
   * several modules given one instance act as nodes of one cluster, each with its own write ids. Optional: without
   * it the module uses the instance itself (a backend instance is one node's connection).
   */
  node?(): StoreBackend;
  /**
   * The server this backend connects to and what a failed connect to it means, for a backend whose server start-up
   * waits for (PostgreSQL, Redis): start-up tries again while the server is not reached, fails at once on a refused
   * login, and names the server in one line either way. Optional: without it a failed open is reported as it is.
   */
  describe?(): ConnectTarget;
  /**
   * Declares a store that never held the library's state new, before (or just after) its first node, so its first
   * grants need no recovery wait (a store found without the library's state looks exactly like one that lost it, and
   * is otherwise waited out): on Hazelcast, the cluster's partitions (refused with `ClusterNotNewError`, writing
   * nothing, when it shows an earlier life); on PostgreSQL, the schema, created now (a schema that existed is in
   * use); on Redis, the map prefix (refused once a node used it). Only for whoever knows nothing was ever granted
   * there: on a store that held permits, it would cut the wait that keeps two holders apart. Needs no open backend.
   * What `nestjs-gatekeeper store init` runs (`declareNewStore`, which gives it the capabilities' `rules`: the
   * records that wait out a recovery, and how to judge them; a backend that keeps no such wait of its own may ignore
   * them). Optional: a backend without it (memory) has no state that outlives its nodes.
   */
  declareNew?(rules: readonly NewStoreRules[]): Promise<NewStoreReport>;
  /**
   * A faster path for tasks: a task store of the backend's own (PostgreSQL: a table with claims found on its indexes,
   * `FOR UPDATE SKIP LOCKED`; Redis: sorted sets kept by its write scripts; Hazelcast: member-side claim queries and
   * a filtered listener). Optional: without it the module keeps tasks in records of this backend (the contract's own
   * task store). Called once per module whose tasks are on this backend; what it returns must pass
   * `describeTaskStoreContract` (from `nestjs-gatekeeper/testing`) and keep its calls to this backend's deadline.
   */
  taskStore?(): TaskStore;
  /**
   * The record map `map`'s reads and compare-and-sets inside the application's own database transaction (optional:
   * the PostgreSQL backend, for a transaction on its own database), so a write of the library commits with the
   * application's rows or not at all. Throws `InvalidInputError` for a transaction it cannot write in.
   */
  recordsIn?(transaction: SqlTransaction, map: string): TransactionRecords;
}

/** The methods every {@link StoreBackend} has (the optional ones aside): what tells a backend from anything else. */
export const STORE_BACKEND_METHODS = ['open', 'close', 'map', 'counters', 'memberCount', 'isConnected', 'operationCount'] as const;

/** Whether `value` is a {@link StoreBackend}: an object with every one of {@link STORE_BACKEND_METHODS}. */
export function isStoreBackend(value: unknown): value is StoreBackend {
  if (value === null || typeof value !== 'object') return false;
  const candidate = value as Record<string, unknown>;
  return STORE_BACKEND_METHODS.every((m) => typeof candidate[m] === 'function');
}
