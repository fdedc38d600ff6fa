import type { Clock } from '../../core/clock';
import { CorruptStateError } from '../../core/errors/corrupt-state.error';
import { parseJsonObject } from '../../core/json-object';
import type { Counters, CounterValue } from '../../store/counter';
import { readDecideWrite, type RecordSlot } from '../../store/read-decide-write';
import type { RecordCallOptions, StoredRecord } from '../../store/record-map';
import type { HazelcastRecordMap } from './hazelcast-record-map';

/**
 * Counters in the IMap `<prefix>.counters` (open-source members have no CP AtomicLong): one record per counter,
 * `{"value":n,"writeId":"…"}`, advanced in the one read-decide-write (`readDecideWrite`); the write id settles an
 * advance whose answer was lost. A counter found absent where its partition's canary says data may have been lost
 * jumps to the current time in microseconds, above anything this process saw of it.
 */
export class HazelcastCounters implements Counters {
  /** The highest value of each counter this process saw. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly map: HazelcastRecordMap,
    private readonly writeId: () => string,
    private readonly clock: Clock,
  ) {}

  async next(name: string, options: RecordCallOptions = {}): Promise<CounterValue> {
    // Every call with the caller's deadline (the loop has none of its own).
    const slot: RecordSlot<StoredRecord | null, string> = {
      read: async () => (await this.map.get(name, options)) ?? null,
      write: (current, next) => (current ? this.map.replace(current, next, options) : this.map.create(name, next, options)),
      holds: (back, next) => back?.value === next,
    };
    // Many nodes advancing one counter at once: the loop's backoff spreads them, so the same fast writers do not win
    // every round while one starves.
    const advanced = await readDecideWrite(`advance counter "${name}"`, slot, async (current) => {
      let lostSince: number | undefined;
      let value: number;
      if (current) {
        value = decodeCounter(name, current.value) + 1;
      } else {
        lostSince = await this.map.lostSince(name, options);
        value = lostSince === undefined ? 1 : this.clock.now() * 1_000;
      }
      value = Math.max(value, (this.seen.get(name) ?? 0) + 1);
      return { result: lostSince === undefined ? { value } : { value, lostSince }, write: JSON.stringify({ value, writeId: this.writeId() }) };
    }, { attempts: COUNTER_ATTEMPTS, backoffMs: COUNTER_BACKOFF_MS });
    this.seen.set(name, advanced.value);
    return advanced;
  }

  async current(name: string, options: RecordCallOptions = {}): Promise<number> {
    const current = await this.map.get(name, options);
    return current ? decodeCounter(name, current.value) : 0;
  }
}

/** Attempts of one advance: a counter is shared by every node, so it is given more than a record's default. */
const COUNTER_ATTEMPTS = 64;
/** The longest wait between two attempts of one advance, in ms. */
const COUNTER_BACKOFF_MS = 50;

function decodeCounter(name: string, raw: string): number {
  const { value } = parseJsonObject(`counter "${name}"`, raw);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new CorruptStateError(`counter "${name}"`, 'no whole value');
  return value;
}

