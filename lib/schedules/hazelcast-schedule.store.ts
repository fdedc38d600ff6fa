import type { IMap } from 'hazelcast-client';
import { compareCodePoints } from '../core/code-point-order';
import { CorruptStateError } from '../core/errors/corrupt-state.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import { StoreCalls } from '../backends/hazelcast/store-call';
import type { ScheduleRecord } from './schedule-record';
import { decodeScheduleRecord, encodeScheduleRecord } from './schedule-record.codec';
import type { ScheduleCallOptions, ScheduleListOptions, ScheduleStore, ScheduleStoreEvents, ScheduleWatcher, VersionedSchedule } from './schedule-store';

/**
 * The key of the change marker in the schedule map: the empty string, which is never a schedule id, so the
 * marker shares the records' map without ever meeting one of them.
 */
export const SCHEDULE_MARKER_KEY = '';

/** How the Hazelcast schedule store finds its map. */
export interface HazelcastScheduleStoreOptions {
  /** The process's shared connection. */
  connection: HazelcastConnection;
  /** Prefix of the IMap: `<prefix>.schedules`. Default `'gatekeeper'`. */
  mapPrefix?: string;
  /** Deadline of a call given none. Default 10 s. */
  callTimeoutMs?: number;
}

/**
 * Runtime schedules in the Hazelcast IMap `<prefix>.schedules`: one canonical JSON string per schedule id, written
 * by `putIfAbsent` / `replaceIfSame` against the exact string read, and the change marker under
 * {@link SCHEDULE_MARKER_KEY}. Changes are heard through an entry listener; a reconnect, a member leaving or a
 * cleared map tell watchers that events may have been missed. Every call goes through {@link StoreCalls}.
 */
export class HazelcastScheduleStore implements ScheduleStore {
  private map?: IMap<string, string>;
  private opened = false;
  private listenerId?: string;
  private membershipListenerId?: string;
  private unsubscribeState?: () => void;
  private events: ScheduleStoreEvents = {};
  private readonly watchers = new Set<ScheduleWatcher>();
  private readonly mapName: string;
  private readonly calls: StoreCalls;

  constructor(private readonly options: HazelcastScheduleStoreOptions) {
    this.mapName = `${options.mapPrefix ?? 'gatekeeper'}.schedules`;
    this.calls = new StoreCalls(options.connection, 'schedules', options.callTimeoutMs ?? 10_000);
  }

  async connect(events: ScheduleStoreEvents = {}): Promise<void> {
    this.events = events;
    this.opened = true;
    try {
      const client = await this.options.connection.open();
      const map = await this.call(() => client.getMap<string, string>(this.mapName), 'open the schedule map', {});
      this.listenerId = await this.call(() => map.addEntryListener(
        {
          added: (e) => this.heard(e.key, e.value),
          updated: (e) => this.heard(e.key, e.value),
          merged: (e) => this.heard(e.key, e.value),
          removed: (e) => this.heard(e.key, null),
          evicted: (e) => this.heard(e.key, null),
          expired: (e) => this.heard(e.key, null),
          mapCleared: () => this.missed(),
          mapEvicted: () => this.missed(),
        },
        undefined,
        true,
      ), 'listen to the schedule map', {});
      // Events missed while disconnected are not replayed, and a member leaving may take some with it.
      this.unsubscribeState = this.options.connection.onState((state) => state === 'connected' && this.missed());
      this.membershipListenerId = client.getCluster().addMembershipListener({ memberAdded: () => undefined, memberRemoved: () => this.missed() });
      this.map = map;
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    this.unsubscribeState?.();
    this.unsubscribeState = undefined;
    if (this.membershipListenerId) this.options.connection.client?.getCluster().removeMembershipListener(this.membershipListenerId);
    this.membershipListenerId = undefined;
    const map = this.map;
    this.map = undefined;
    if (this.listenerId && map) await map.removeEntryListener(this.listenerId).catch(() => undefined);
    this.listenerId = undefined;
    this.events = {};
    if (!this.opened) return;
    this.opened = false;
    await this.options.connection.close();
  }

  async read(id: string, options: ScheduleCallOptions = {}): Promise<VersionedSchedule> {
    const map = this.requireMap();
    const raw = (await this.call(() => map.get(id), `read schedule "${id}"`, options)) ?? null;
    return { raw, record: raw === null ? undefined : decodeScheduleRecord(id, raw) };
  }

  async list({ removed = false, ...options }: ScheduleListOptions = {}): Promise<VersionedSchedule[]> {
    const map = this.requireMap();
    const entries = await this.call(() => map.entrySet(), 'list schedules', options);
    const listed: VersionedSchedule[] = [];
    for (const [id, raw] of entries.sort(([a], [b]) => compareCodePoints(a, b))) {
      if (id === SCHEDULE_MARKER_KEY) continue;
      try {
        const record = decodeScheduleRecord(id, raw);
        if (removed || record.definition !== null) listed.push({ raw, record });
      } catch (error) {
        this.events.corruptValue?.(id, (error as Error).message);
      }
    }
    return listed;
  }

  async compareAndSet(id: string, expected: Pick<VersionedSchedule, 'raw'>, next: ScheduleRecord, options: ScheduleCallOptions = {}): Promise<boolean> {
    const map = this.requireMap();
    const raw = encodeScheduleRecord(next);
    if (expected.raw === null) return (await this.call(() => map.putIfAbsent(id, raw), `create schedule "${id}"`, options)) === null;
    return this.call(() => map.replaceIfSame(id, expected.raw!, raw), `write schedule "${id}"`, options);
  }

  async readMarker(options: ScheduleCallOptions = {}): Promise<string | null> {
    const map = this.requireMap();
    return (await this.call(() => map.get(SCHEDULE_MARKER_KEY), 'read the schedule change marker', options)) ?? null;
  }

  async touchMarker(value: string, options: ScheduleCallOptions = {}): Promise<void> {
    const map = this.requireMap();
    await this.call(() => map.set(SCHEDULE_MARKER_KEY, value), 'touch the schedule change marker', options);
  }

  watch(watcher: ScheduleWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  operationCount(): number {
    return this.calls.count();
  }

  /** An entry event: the record as written (a tombstone too), or its disappearance; unreadable values are reported. */
  private heard(id: string, raw: string | null | undefined): void {
    if (id === SCHEDULE_MARKER_KEY || this.watchers.size === 0) return;
    let record: ScheduleRecord | undefined;
    if (raw !== null && raw !== undefined) {
      try {
        record = decodeScheduleRecord(id, raw);
      } catch (error) {
        this.events.corruptValue?.(id, error instanceof CorruptStateError ? error.message : String(error));
        return;
      }
    }
    for (const watcher of [...this.watchers]) guard(() => watcher.changed(id, record));
  }

  private missed(): void {
    for (const watcher of [...this.watchers]) guard(() => watcher.missed?.());
  }

  private requireMap(): IMap<string, string> {
    if (!this.map) throw new StoreUnavailableError('the schedule store is not connected');
    return this.map;
  }

  /** One cluster call, through the home of every store call (deadline, failures mapped to the library's errors). */
  private call<T>(operation: () => Promise<T>, what: string, options: ScheduleCallOptions): Promise<T> {
    return this.calls.run(operation, what, options.timeoutMs);
  }
}

/** Runs a watcher so that one that throws never stops the others (or the client's event thread). */
function guard(action: () => void): void {
  try {
    action();
  } catch {
    // The watcher's own business; the view reports its listeners' failures itself.
  }
}
