import { recordField } from '../../store/record-field';
import { leadingWriteId, type RecordCallOptions, type RecordChanges, type RecordMap, type RecordWriteOptions, type StoredRecord, type Unwatch, type WatchOptions } from '../../store/record-map';
import type { RedisCalls, ScriptAnswer } from './redis-calls';
import type { RedisFeed } from './redis-feed';

/** What a {@link RedisRecordMap} is given by its backend. */
export interface RedisRecordMapContext {
  readonly calls: RedisCalls;
  readonly feed: RedisFeed;
}

/** `{ key, value, key, value, ... }` as records. */
function pairs(flat: readonly string[] | null): StoredRecord[] {
  const records: StoredRecord[] = [];
  for (let i = 0; flat && i + 1 < flat.length; i += 2) records.push({ key: flat[i], value: flat[i + 1] });
  return records;
}

/**
 * One record map in a Redis hash (`{<prefix>}:m:<map>`), every call one Lua script: create takes only an absent or
 * expired record's place, replace and remove compare the exact stored text, each write bumps the store's epoch and
 * publishes the change, atomically. TTLs count on the server's clock (`TIME`), kept in a sorted set beside the hash.
 * `findBy` reads the map and filters here: the maps it serves are small (presence, schedules); tasks have a store of
 * their own.
 */
export class RedisRecordMap implements RecordMap {
  constructor(
    readonly name: string,
    /** The map's name in the keys (`<name>`, under the backend's tag). */
    private readonly stored: string,
    private readonly context: RedisRecordMapContext,
  ) {}

  async get(key: string, options: RecordCallOptions = {}): Promise<StoredRecord | undefined> {
    const { result } = await this.call<string | null>('get', [this.stored, key], `read ${this.name} "${key}"`, options);
    return result === null ? undefined : { key, value: result };
  }

  async getMany(keys: readonly string[], options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    if (keys.length === 0) return [];
    const { result } = await this.call<string[]>('getMany', [this.stored, ...keys], `read ${keys.length} of ${this.name}`, options);
    return pairs(result);
  }

  async list(options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    const { result } = await this.call<string[]>('list', [this.stored], `list ${this.name}`, options);
    return pairs(result);
  }

  async findBy(field: string, value: string | number | boolean, options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    return (await this.list(options)).filter((record) => recordField(record.value, field) === value);
  }

  async create(key: string, value: string, options: RecordWriteOptions = {}): Promise<boolean> {
    return this.write('create', [this.stored, key, value, options.ttlMs ?? ''], `create ${this.name} "${key}"`, options);
  }

  async replace(expected: StoredRecord, value: string, options: RecordWriteOptions = {}): Promise<boolean> {
    // A value that opens with its write id is compared by that id: the same answer as the whole text, which is then
    // not sent a second time (see leadingWriteId).
    const id = leadingWriteId(expected.value);
    const args = [this.stored, expected.key, id ?? expected.value, value, options.ttlMs ?? '', options.notBefore ?? '', id === undefined ? '' : 'id'];
    return this.write('replace', args, `write ${this.name} "${expected.key}"`, options);
  }

  async remove(expected: StoredRecord, options: RecordCallOptions = {}): Promise<boolean> {
    return this.write('remove', [this.stored, expected.key, expected.value], `remove ${this.name} "${expected.key}"`, options);
  }

  async put(key: string, value: string, options: RecordWriteOptions = {}): Promise<void> {
    await this.call('put', [this.stored, key, value, options.ttlMs ?? ''], `write ${this.name} "${key}"`, options);
  }

  async delete(key: string, options: RecordCallOptions = {}): Promise<void> {
    await this.call('delete', [this.stored, key], `remove ${this.name} "${key}"`, options);
  }

  /**
   * Since when the record may have been lost: marked lost (`markLost`, or dropped by a loss as a lease), or any record
   * since the store was found to have lost writes. The script checks the store's incarnation first, so a node asking
   * for an absent record cannot miss a loss no node has seen yet.
   */
  async lostSince(key: string, options: RecordCallOptions = {}): Promise<number | undefined> {
    const answer = await this.call<string | null>('lostMark', [this.stored, key], `read whether ${this.name} "${key}" was lost`, options);
    const times = [answer.result === null ? undefined : Number(answer.result), answer.lostAt].filter((t): t is number => t !== undefined);
    return times.length === 0 ? undefined : Math.max(...times);
  }

  async lostValue(key: string, options: RecordCallOptions = {}): Promise<string | undefined> {
    const { result } = await this.call<string | null>('lostValue', [this.stored, key], `read what a loss dropped of ${this.name} "${key}"`, options);
    return result ?? undefined;
  }

  async markLost(key: string, options: RecordCallOptions = {}): Promise<void> {
    // On the server's clock, which times permits: a recovery wait counted from it is never cut by a node's clock.
    await this.call('markLost', [this.stored, key], `mark ${this.name} "${key}" lost`, options);
  }

  watch(changes: RecordChanges, options: WatchOptions = {}): Promise<Unwatch> {
    return this.context.feed.watch(this.stored, this.name, changes, options.exceptMark);
  }

  /** A compare-and-set: true when it wrote. A late answer goes to `lateOutcome`. */
  private async write(name: 'create' | 'replace' | 'remove', args: (string | number)[], what: string, options: RecordWriteOptions): Promise<boolean> {
    const tell = options.lateOutcome;
    const late = tell && ((answer: ScriptAnswer<number> | undefined) => tell(answer === undefined ? undefined : answer.result === 1));
    const { result } = await this.context.calls.run<number>(name, args, what, options.timeoutMs, late);
    return result === 1;
  }

  private call<R>(name: Parameters<RedisCalls['run']>[0], args: (string | number)[], what: string, options: RecordCallOptions): Promise<ScriptAnswer<R>> {
    return this.context.calls.run<R>(name, args, what, options.timeoutMs);
  }
}
