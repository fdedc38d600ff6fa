import type { Client, IMap } from 'hazelcast-client';
import { systemClock } from '../../core/clock';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import type { Counters } from '../../store/counter';
import type { RecordMap, RecordMapSpec } from '../../store/record-map';
import { SharedOpen } from '../../store/shared-open';
import { writeIdsOf } from '../../store/write-ids';
import { storeCallsOf } from '../../store/store-call-observers';
import type { StoreBackend } from '../../store/store-backend';
import type { TaskStore } from '../../store/tasks/task-store';
import { HazelcastConnection } from './hazelcast-connection';
import { MemberReconnections } from './member-reconnections';
import type { HazelcastBackendOptions } from './hazelcast-backend.options';
import { HazelcastCounters } from './hazelcast-counters';
import { CANARY_MAP, PartitionCanaries } from './hazelcast-partition-canaries';
import { HazelcastRecordMap } from './hazelcast-record-map';
import { StoreCalls } from './store-call';
import { HazelcastTaskStore } from './tasks/hazelcast-task.store';
import { declareNewCluster } from './hazelcast-new-cluster';
import type { NewStoreRules } from '../../store/new-store-rules';
import type { NewStoreReport } from '../../store/new-store-report';

export type { HazelcastBackendOptions } from './hazelcast-backend.options';

/**
 * The store contract on a Hazelcast cluster: record maps are IMaps (`<prefix>.<name>`), changes come from entry
 * listeners (a reconnect, a member leaving or a cleared map say changes may have been missed), counters are records
 * advanced by compare-and-set, and the partition canaries tell a lost record from one never written. No CP
 * Subsystem (not in open-source members since 5.5) and no code on the members.
 */
export class HazelcastBackend implements StoreBackend {
  /** {@inheritDoc StoreBackend.kind} */
  readonly kind = 'hazelcast';
  /** @internal The connection the backend opens (its own, or the module's). */
  readonly connection: HazelcastConnection;
  private client?: Client;
  private canaries?: PartitionCanaries;
  private readonly opened = new SharedOpen(() => this.start(), () => this.stop());
  /** Whether this backend holds one open of the connection (to close once). */
  private holdsConnection = false;
  private readonly calls: StoreCalls;
  /** The prefix of this backend's IMaps (`<prefix>.<map>`). */
  readonly mapPrefix: string;
  private countersOf?: Promise<Counters>;
  private lostMarks?: Promise<IMap<string, string>>;

  constructor(private readonly options: HazelcastBackendOptions = {}) {
    this.connection = options.connection ?? new HazelcastConnection(options);
    this.mapPrefix = options.mapPrefix ?? 'gatekeeper';
    this.calls = new StoreCalls(options.callTimeoutMs ?? 10_000);
  }

  /** Opens the connection (the first caller; later ones share it) and makes sure the partition canaries are there. */
  open(): Promise<void> {
    return this.opened.open();
  }

  /** {@inheritDoc StoreBackend.close} */
  close(): Promise<void> {
    return this.opened.close();
  }

  /** Lets go of what the last open made. */
  private async stop(): Promise<void> {
    this.client = undefined;
    this.canaries = undefined;
    this.countersOf = undefined;
    this.lostMarks = undefined;
    // Once per open of the connection: a shared one stays up for its other users.
    if (this.holdsConnection) {
      this.holdsConnection = false;
      await this.connection.close();
    }
  }

  private async start(): Promise<void> {
    this.holdsConnection = true;
    const opened = this.connection.open();
    try {
      const client = await opened;
      const calls = this.calls;
      const canaries = new PartitionCanaries(client, await calls.run(() => client.getMap<string, string>(CANARY_MAP), 'open the canary map'), this.options.clock ?? systemClock);
      await canaries.ensure((operation) => calls.run(operation, 'canaries'));
      this.client = client;
      this.canaries = canaries;
    } catch (error) {
      if (this.holdsConnection) {
        this.holdsConnection = false;
        await this.connection.close();
      }
      throw error;
    }
  }

  /** {@inheritDoc StoreBackend.map} */
  async map(name: string, spec: RecordMapSpec = {}): Promise<RecordMap> {
    const client = this.requireClient();
    const calls = this.calls;
    const json = (spec.indexes?.length ?? 0) > 0;
    const map = await calls.run(() => client.getMap<string, string>(`${this.mapPrefix}.${name}`), `open the ${name} map`);
    return new HazelcastRecordMap(name, map, json, {
      connection: this.connection,
      calls,
      canaries: () => this.canaries ?? (() => { throw new StoreUnavailableError('the Hazelcast backend is not open'); })(),
      lostMarks: () => (this.lostMarks ??= calls.run(() => client.getMap<string, string>(`${this.mapPrefix}.lost-records`), 'open the lost-records map').catch((error: unknown) => {
        this.lostMarks = undefined;
        throw error;
      })),
      now: () => (this.options.clock ?? systemClock).now(),
      reconnections: () => MemberReconnections.of(client),
    });
  }

  /** {@inheritDoc StoreBackend.counters} */
  counters(): Promise<Counters> {
    this.countersOf ??= this.map('counters').then((map) => new HazelcastCounters(map as HazelcastRecordMap, () => writeIdsOf(this).next(), this.options.clock ?? systemClock));
    return this.countersOf;
  }

  /**
   * Declares the whole cluster new, every map prefix on it (see `StoreBackend.declareNew`), and lifts the waits nodes
   * set meanwhile on the records `rules` judge.
   */
  async declareNew(rules: readonly NewStoreRules[]): Promise<NewStoreReport> {
    await this.open();
    try {
      const client = this.requireClient();
      const { canariesMarked, waitsLifted } = await declareNewCluster(client, this.options.clock ?? systemClock, rules);
      const lifted = waitsLifted.map(({ map, semaphore }) => ({ map, semaphore }));
      return { store: `Hazelcast cluster "${client.getConfig().clusterName}"`, declared: true, alreadyNew: canariesMarked === 0, waitsLifted: lifted };
    } finally {
      await this.close();
    }
  }

  /** {@inheritDoc StoreBackend.memberCount} */
  memberCount(): number | undefined {
    return this.isConnected() ? (this.client?.getCluster().getMembers().length ?? 0) : 0;
  }

  /**
   * Whether the feed tells every loss of events (see `StoreBackend.feedTellsEveryLoss`). The client can lose one
   * member's events with no event of its own (HAZELCAST.md); the maps' feeds tell that loss too where the client
   * exposes its member connections, routes smartly and closes a silent connection within 15 s, as the module's own
   * 5.6/5.7 client does (see `MemberReconnections.tellsEveryLoss`): then yes, once open.
   */
  get feedTellsEveryLoss(): boolean {
    return this.client !== undefined && MemberReconnections.tellsEveryLoss(this.client);
  }

  /** {@inheritDoc StoreBackend.isConnected} */
  isConnected(): boolean {
    return this.opened.isOpen() && this.connection.isRunning();
  }

  /** {@inheritDoc StoreBackend.operationCount} */
  operationCount(): number {
    return this.calls.count();
  }

  /** {@inheritDoc StoreBackend.taskStore} */
  taskStore(): TaskStore {
    return new HazelcastTaskStore({
      connection: this.connection, mapPrefix: this.mapPrefix, callTimeoutMs: this.options.callTimeoutMs, observers: storeCallsOf(this),
    });
  }

  private requireClient(): Client {
    if (!this.client) throw new StoreUnavailableError('the Hazelcast backend is not open');
    return this.client;
  }
}
