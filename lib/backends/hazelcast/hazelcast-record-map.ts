import type { IMap, Predicate } from 'hazelcast-client';
import { HazelcastJsonValue, Predicates } from './hazelcast-client.load';
import { StoreTimeoutError } from '../../core/errors/store-timeout.error';
import { writtenByMark, type RecordCallOptions, type RecordChanges, type RecordMap, type RecordWriteOptions, type StoredRecord, type Unwatch, type WatchOptions } from '../../store/record-map';
import type { HazelcastConnection } from './hazelcast-connection';
import type { PartitionCanaries } from './hazelcast-partition-canaries';
import type { MemberReconnections } from './member-reconnections';
import type { StoreCalls } from './store-call';
import { recordField } from '../../store/record-field';

/** A map's stored values: strings, or JSON values the members can query by field (maps with indexes). */
type Stored = string | HazelcastJsonValue;


/** What a {@link HazelcastRecordMap} is given by its backend. */
export interface HazelcastRecordMapContext {
  readonly connection: HazelcastConnection;
  readonly calls: StoreCalls;
  readonly canaries: () => PartitionCanaries;
  /** The map of records marked lost (`<map>/<key>` → when), shared by the backend's maps. */
  readonly lostMarks: () => Promise<IMap<string, string>>;
  /** Where time is read (the time a record is marked lost). */
  readonly now: () => number;
  /** The client's member reconnections, where it exposes them (see {@link MemberReconnections}). */
  readonly reconnections: () => MemberReconnections | undefined;
}

/**
 * One record map in a Hazelcast IMap: create is `putIfAbsent`, replace `replaceIfSame` and remove `remove(key, value)`,
 * each against the exact text (the members compare serialized bytes), every call through the backend's
 * {@link StoreCalls} (deadline, failures mapped fail-closed). A map opened with indexes keeps JSON values, so
 * `findBy` runs on the members; the others keep strings. Lost records are told by the partition canaries.
 */
export class HazelcastRecordMap implements RecordMap {
  constructor(
    readonly name: string,
    private readonly map: IMap<string, Stored>,
    private readonly json: boolean,
    private readonly context: HazelcastRecordMapContext,
  ) {}

  async get(key: string, options: RecordCallOptions = {}): Promise<StoredRecord | undefined> {
    const stored = await this.call(() => this.map.get(key), `read ${this.name} "${key}"`, options);
    return stored === null || stored === undefined ? undefined : { key, value: text(stored) };
  }

  async getMany(keys: readonly string[], options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    if (keys.length === 0) return [];
    const entries = await this.call(() => this.map.getAll([...keys]), `read ${keys.length} of ${this.name}`, options);
    return entries.map(([key, stored]) => ({ key, value: text(stored) }));
  }

  async list(options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    const entries = await this.call(() => this.map.entrySet(), `list ${this.name}`, options);
    return entries.map(([key, stored]) => ({ key, value: text(stored) }));
  }

  async findBy(field: string, value: string | number | boolean, options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    if (!this.json) return (await this.list(options)).filter((record) => recordField(record.value, field) === value);
    const entries = await this.call(() => this.map.entrySetWithPredicate(Predicates.equal(field, value)), `find ${this.name} by ${field}`, options);
    return entries.map(([key, stored]) => ({ key, value: text(stored) }));
  }

  // The writes are every decision's hot path: no async layer of their own (each costs a promise and its awaits).
  create(key: string, value: string, options: RecordWriteOptions = {}): Promise<boolean> {
    const created = () => this.map.putIfAbsent(key, this.stored(value), options.ttlMs).then(absentBefore);
    return this.write(created, `create ${this.name} "${key}"`, options);
  }

  replace(expected: StoredRecord, value: string, options: RecordWriteOptions = {}): Promise<boolean> {
    const what = `write ${this.name} "${expected.key}"`;
    const replaced = this.write(() => this.map.replaceIfSame(expected.key, this.stored(expected.value), this.stored(value)), what, options);
    const ttlMs = options.ttlMs;
    if (ttlMs === undefined) return replaced;
    // replaceIfSame takes no TTL and resets the entry's to the map's default: set it again (a garbage-collection aid).
    return replaced.then(async (written) => {
      if (written) await this.call(() => this.map.setTtl(expected.key, ttlMs), what, options).catch(() => undefined);
      return written;
    });
  }

  async remove(expected: StoredRecord, options: RecordCallOptions = {}): Promise<boolean> {
    return this.call(() => this.map.remove(expected.key, this.stored(expected.value)) as Promise<boolean>, `remove ${this.name} "${expected.key}"`, options);
  }

  async put(key: string, value: string, options: RecordWriteOptions = {}): Promise<void> {
    await this.call(() => this.map.set(key, this.stored(value), options.ttlMs), `write ${this.name} "${key}"`, options);
  }

  async delete(key: string, options: RecordCallOptions = {}): Promise<void> {
    await this.call(() => this.map.delete(key), `remove ${this.name} "${key}"`, options);
  }

  /**
   * Since when `key`'s partition is known intact (its canary), or since the record was marked lost, whichever is
   * later. The mark is read only when the canary says the partition always was intact or since before it.
   */
  async lostSince(key: string, options: RecordCallOptions = {}): Promise<number | undefined> {
    const intactSince = await this.context.canaries().intactSince(key, (operation) => this.call(operation, `canary of ${this.name} "${key}"`, options));
    const marks = await this.context.lostMarks();
    const mark = await this.call(() => marks.get(`${this.name}/${key}`), `lost mark of ${this.name} "${key}"`, options);
    const markedAt = mark === null || mark === undefined ? undefined : Number(mark);
    if (markedAt === undefined || !Number.isFinite(markedAt)) return intactSince;
    return intactSince === undefined ? markedAt : Math.max(intactSince, markedAt);
  }

  /** Marks this one record lost (a record of its own in `<prefix>.lost-records`): no other key, map or prefix is touched. */
  async markLost(key: string, options: RecordCallOptions = {}): Promise<void> {
    const marks = await this.context.lostMarks();
    await this.call(() => marks.set(`${this.name}/${key}`, String(this.context.now())), `mark ${this.name} "${key}" lost`, options);
  }

  async watch(changes: RecordChanges, options: WatchOptions = {}): Promise<Unwatch> {
    let ids: string[] | undefined;
    let stopped = false;
    let relistening = false;
    // One member's connection reset and made again: what it sent meanwhile is lost, with no event of the client's.
    // Watched before the listeners are added, so a connection made while they are is waited for too.
    const reconnections = this.context.reconnections();
    const unwatchReconnections = reconnections?.watch(() => ids, () => {
      if (stopped || !ids || relistening) return;
      if (ids.every((id) => reconnections.listening(id))) return changes.missed('reconnected');
      // The client dropped a listener whose registration failed on a live connection: listen again (once at a
      // time), then re-read.
      const dropped = ids;
      relistening = true;
      void this.listen(changes, options).then(async (again) => {
        if (stopped) return this.unlisten(again);
        ids = again;
        await this.unlisten(dropped);
        changes.missed('reconnected');
      }, () => changes.missed('disconnected')).finally(() => {
        relistening = false;
      });
    });
    try {
      ids = await this.listen(changes, options);
    } catch (error) {
      unwatchReconnections?.();
      throw error;
    }
    // Events missed while disconnected are not replayed, and a member leaving may take some (and data) with it.
    const unsubscribeState = this.context.connection.onState((state) => changes.missed(state === 'connected' ? 'reconnected' : 'disconnected'));
    const client = this.context.connection.client;
    const membership = client?.getCluster().addMembershipListener({ memberAdded: () => undefined, memberRemoved: () => changes.missed('member-left') });
    return async () => {
      stopped = true;
      unsubscribeState();
      unwatchReconnections?.();
      if (membership) client?.getCluster().removeMembershipListener(membership);
      await this.unlisten(ids ?? []);
    };
  }

  /** Removes entry listeners by their registration ids (a listener already gone is no error). */
  private async unlisten(ids: readonly string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.map.removeEntryListener(id).catch(() => undefined)));
  }

  /** Adds the entry listeners of one watch; returns their registration ids. */
  private async listen(changes: RecordChanges, options: WatchOptions): Promise<string[]> {
    const heard = (key: string, stored: Stored | null | undefined) => changes.changed(key, stored === null || stored === undefined ? null : text(stored));
    const gone = (key: string) => changes.changed(key, null);
    const cleared = () => changes.missed('cleared');
    const own = !this.json ? options.exceptMark : undefined;
    const ids: string[] = [];
    try {
      if (own !== undefined) {
        // Values on a listener that leaves out this node's own writes (their write ids carry its mark); removals on a
        // second without values: a predicate would test the removed value and hide the removal of an own write.
        ids.push(await this.call(() => this.map.addEntryListenerWithPredicate(
          { added: (e) => heard(e.key, e.value), updated: (e) => heard(e.key, e.value), merged: (e) => heard(e.key, e.value) },
          writtenByOthers(own),
          undefined,
          true,
        ), `listen to ${this.name}`, {}));
        ids.push(await this.call(() => this.map.addEntryListener(
          { removed: (e) => gone(e.key), evicted: (e) => gone(e.key), expired: (e) => gone(e.key), mapCleared: cleared, mapEvicted: cleared },
          undefined,
          false,
        ), `listen to ${this.name}`, {}));
      } else {
        ids.push(await this.call(() => this.map.addEntryListener(
          {
            added: (e) => heard(e.key, e.value), updated: (e) => heard(e.key, e.value), merged: (e) => heard(e.key, e.value),
            removed: (e) => gone(e.key), evicted: (e) => gone(e.key), expired: (e) => gone(e.key), mapCleared: cleared, mapEvicted: cleared,
          },
          undefined,
          true,
        ), `listen to ${this.name}`, {}));
      }
    } catch (error) {
      await this.unlisten(ids);
      throw error;
    }
    return ids;
  }

  /**
   * A compare-and-set through the backend's calls. The client cannot cancel an invocation: one past its deadline may
   * still land, and its answer is handed to `lateOutcome` when it comes.
   */
  private write(operation: () => Promise<boolean>, what: string, options: RecordWriteOptions): Promise<boolean> {
    const tell = options.lateOutcome;
    if (!tell) return this.call(operation, what, options);
    let sent: Promise<boolean> | undefined;
    // A rejection handler only: an answer in time passes through with no layer of its own.
    return this.call(() => (sent = operation()), what, options).catch((error: unknown) => {
      if (error instanceof StoreTimeoutError) {
        if (sent) void sent.then((landed) => tell(landed), () => tell(undefined)).catch(() => undefined);
        else tell(undefined);
      }
      throw error;
    });
  }

  private stored(value: string): Stored {
    return this.json ? new HazelcastJsonValue(value) : value;
  }

  private call<T>(operation: () => Promise<T>, what: string, options: RecordCallOptions): Promise<T> {
    return this.context.calls.run(operation, what, options.timeoutMs);
  }
}

/** Whether a `putIfAbsent` found no previous value (it created the record). */
const absentBefore = (previous: unknown): boolean => previous === null || previous === undefined;

/**
 * The text of a stored value. A client that parses JSON values eagerly (the Node client's default) hands over the
 * object: written as `JSON.stringify` writes it (what the contract asks of values in a map with indexes), it turns
 * back into the same text, so a compare-and-set against it matches the stored bytes.
 */
function text(stored: Stored | object): string {
  if (typeof stored === 'string') return stored;
  return stored instanceof HazelcastJsonValue ? stored.toString() : JSON.stringify(stored);
}

/**
 * How far into a record's text, before its first nested object or array, the member looks for this node's write id
 * (`OWN_WRITE_SCAN` characters). The library's codecs put `writeId` among a record's first top-level fields; a
 * record whose write id lies further is sent to its writer anyway, which the contract allows (the writer's view
 * takes the answer it already has).
 */
const OWN_WRITE_SCAN = 256;

/**
 * The member-side predicate of a watch with `exceptMark`: every value but those that carry a write id with `mark` (see
 * `writtenByMark`) among their leading top-level fields. Anchored at the record's start and bounded, so a value of
 * another writer fails after a few characters: an unanchored `like '%…%'` scans every value whole, on the member's
 * partition thread, for every listener, and measured 10 % on a listened compare-and-set. Exported for the benchmark's
 * listened floor, which listens as a node does.
 */
export function writtenByOthers(mark: string): Predicate {
  const own = writtenByMark(mark).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return Predicates.not(Predicates.regex('this', `(?s)\\{[^{}\\[\\]]{0,${OWN_WRITE_SCAN}}?${own}.*`));
}
