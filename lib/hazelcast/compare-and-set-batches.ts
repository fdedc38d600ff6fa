import type { IMap } from 'hazelcast-client';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { CompareAndSetMany, type CompareAndSetWrite } from './member-processors';

/** How a batch reaches the cluster: one call with the batch's deadline (the store's call, with its error mapping). */
export type BatchCall = (operation: () => Promise<Array<[string, unknown]>>, what: string, timeoutMs: number | undefined) => Promise<Array<[string, unknown]>>;

interface Pending extends CompareAndSetWrite {
  readonly timeoutMs: number | undefined;
  resolve(landed: boolean): void;
  reject(error: unknown): void;
}

/** At most this many writes per call: a claim round or a burst of completions, not a whole backlog in one message. */
const MOST_PER_CALL = 256;

/**
 * Compare-and-sets made in the same turn of the event loop, sent as one call that the members' processors decide key
 * by key (see member-processors.ts): a claim round of 16 tasks, or the completions of the runs that ended together,
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
    this.call(() => this.map().executeOnKeys(batch.map((w) => w.key), new CompareAndSetMany(this.json, batch)), what, timeoutMs).then(
      (answers) => {
        const landed = new Map(answers.map(([key, value]) => [key, value]));
        for (const w of batch) {
          const answer = landed.get(w.key);
          // Every key answers true or false; without an answer its outcome is unknown, as if the answer were lost.
          if (typeof answer === 'boolean') w.resolve(answer);
          else w.reject(new StoreUnavailableError(`no answer for ${w.key} in a batch of ${batch.length} writes`));
        }
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
  }
}
