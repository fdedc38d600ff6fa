import type { Clock } from '../../core/clock';
import { CorruptStateError } from '../../core/errors/corrupt-state.error';
import { parseJsonObject } from '../../core/json-object';
import { CONFLICT, retryOnConflict } from '../../store/compare-and-set';
import type { Counters, CounterValue } from '../../store/counter';
import type { RecordCallOptions } from '../../store/record-map';
import { settleWrite } from '../../store/settle-write';
import type { HazelcastRecordMap } from './hazelcast-record-map';

/**
 * Counters in the IMap `<prefix>.counters` (open-source members have no CP AtomicLong): one record per counter,
 * `{"value":n,"writeId":"…"}`, advanced by compare-and-set in the one bounded loop; the write id settles an
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
    return retryOnConflict(`advance counter "${name}"`, async (attempt) => {
      // Many nodes advancing one counter at once: after a lost race, wait a random moment (growing, at most 50 ms)
      // so the same fast writers do not win every round while one starves.
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
      const current = await this.map.get(name, options);
      let lostSince: number | undefined;
      let value: number;
      if (current) {
        value = decodeCounter(name, current.value) + 1;
      } else {
        lostSince = await this.map.lostSince(name, options);
        value = lostSince === undefined ? 1 : this.clock.now() * 1_000;
      }
      value = Math.max(value, (this.seen.get(name) ?? 0) + 1);
      const next = JSON.stringify({ value, writeId: this.writeId() });
      const { written } = await settleWrite(this.map, name, next, () => (current ? this.map.replace(current, next, options) : this.map.create(name, next, options)));
      if (!written) return CONFLICT;
      this.seen.set(name, value);
      return lostSince === undefined ? { value } : { value, lostSince };
    }, { attempts: COUNTER_ATTEMPTS });
  }

  async current(name: string, options: RecordCallOptions = {}): Promise<number> {
    const current = await this.map.get(name, options);
    return current ? decodeCounter(name, current.value) : 0;
  }
}

/** Attempts of one advance: a counter is shared by every node, so it is given more than a record's default. */
const COUNTER_ATTEMPTS = 64;

function decodeCounter(name: string, raw: string): number {
  const { value } = parseJsonObject(`counter "${name}"`, raw);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new CorruptStateError(`counter "${name}"`, 'no whole value');
  return value;
}

