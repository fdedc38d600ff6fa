import type { IMap } from 'hazelcast-client';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { CompareAndSetMany, type CompareAndSetWrite } from './member-processors';

/** How a batch reaches the cluster: one call with the batch's deadline (the store's call, with its error mapping). */
export type BatchCall = (operation: () => Promise<unknown>, what: string, timeoutMs: number | undefined) => Promise<unknown>;

interface Pending extends CompareAndSetWrite {
  readonly timeoutMs: number | undefined;
  resolve(landed: boolean): void;
  reject(error: unknown): void;
}

/** At most this many writes per call: a claim round or a burst of completions, not a whole backlog in one message. */
const MOST_PER_CALL = 256;

/**
 * Compare-and-sets made in the same turn of the event loop, sent as one call; on the members each is a single-key
 * compare-and-set of its own, with synchronous backups (see member-processors.ts): a claim round of 16 tasks, or the completions of the runs that ended together,
 * cost one round trip instead of one each. Each write keeps its own answer, as `replaceIfSame` would give it; a failed
 * call fails every write in it (each outcome unknown, as a lost answer always was). Two writes to one key never share
 * a call (the members would see one): the second goes in the next.
 */
export class CompareAndSetBatches {
  private queued: Pending[] = [];
  private keys = new Set<string>();
  private scheduled = false;

  constructor(
    private readonly map: () => IMap<string, unknown>,
    private readonly json: boolean,
    private readonly call: BatchCall,
    /** The deadline of a write given none. */
    private readonly defaultTimeoutMs: number,
    /** A write sent alone: the store's own compare-and-set call. */
    private readonly single: (write: CompareAndSetWrite, timeoutMs: number) => Promise<boolean>,
  ) {}

  /** Whether `next` replaced `expected` (`null`: created; `next` `null`: removed), decided on the members. */
  write(key: string, expected: string | null, next: string | null, timeoutMs?: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (this.keys.has(key) || this.queued.length >= MOST_PER_CALL) this.flush();
      this.queued.push({ key, expected, next, timeoutMs, resolve, reject });
      this.keys.add(key);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends what is queued as one call. */
  private flush(): void {
    this.scheduled = false;
    const batch = this.queued;
    if (batch.length === 0) return;
    this.queued = [];
    this.keys = new Set();
    const timeoutMs = Math.min(...batch.map((w) => w.timeoutMs ?? this.defaultTimeoutMs)); // no write waits past its own
    const what = batch.length === 1 ? `write ${batch[0].key}` : `write ${batch.length} entries (${batch[0].key}, …)`;
    if (batch.length === 1) {
      // Alone, a write goes as the client's own compare-and-set: no detour through a member's executor.
      this.single(batch[0], timeoutMs).then(batch[0].resolve, batch[0].reject);
      return;
    }
    // Run on the first write's key: the member that owns it makes every write of the batch (see CompareAndSetMany).
    const many = () => {
      const map = this.map();
      return map.executeOnKey(batch[0].key, new CompareAndSetMany(map.getName(), this.json, batch));
    };
    this.call(many, what, timeoutMs).then(
      (answer) => {
        const landed = Array.isArray(answer) && answer.length === batch.length ? answer : undefined;
        for (const [i, w] of batch.entries()) {
          // Every write answers true or false; without an answer its outcome is unknown, as if the answer were lost.
          if (typeof landed?.[i] === 'boolean') w.resolve(landed[i] as boolean);
          else w.reject(new StoreUnavailableError(`no answer for ${w.key} in a batch of ${batch.length} writes`));
        }
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
  }
}
