/** A write that goes out in a batch: its key (one write per key per batch) and its caller's deadline. */
export interface BatchedWrite {
  readonly key: string;
  readonly timeoutMs: number | undefined;
}

interface Waiting<W> {
  readonly write: W;
  resolve(landed: boolean): void;
  reject(error: unknown): void;
}

/** A call of another kind that takes the turn's writes along (see {@link TurnBatches.alongside}). */
interface Rider<W> {
  readonly call: (writes: readonly W[], timeoutMs: number | undefined) => Promise<{ readonly landed: readonly boolean[] }>;
  resolve(answer: unknown): void;
  reject(error: unknown): void;
}

/**
 * Writes asked for in one turn of the event loop, sent together (a node's claims for its free slots, the completions
 * of handlers that ended together, a burst of submits): one round trip for all of them where the store can take
 * several writes in one call. The one home of the batching rules every backend's native task store follows:
 *
 * - the batch goes out once the turn's writes are in (`setImmediate`), in calls of at most `most` writes;
 * - a key is written at most once per batch (a second write of it waits for the next), so the call's answer tells
 *   every writer its own outcome;
 * - a call that fails fails each of its writes with its error (a lost answer: each outcome unknown, as for a single
 *   write), and a call's deadline is the shortest of its writes'.
 * - a call of another kind asked for in the same turn (a node's next reserve, see {@link TurnBatches.alongside}) takes
 *   the first of those calls' writes along: a node's completions and its next claim in one round trip.
 */
export class TurnBatches<W extends BatchedWrite> {
  private queued: Array<Waiting<W>> = [];
  private riders: Array<Rider<W>> = [];
  private scheduled = false;

  /**
   * @param send - Sends one call of writes with its deadline; resolves with whether each landed, in their order.
   * @param most - Writes of one call at most.
   */
  constructor(
    private readonly send: (writes: readonly W[], timeoutMs: number | undefined) => Promise<readonly boolean[]>,
    private readonly most = 256,
  ) {}

  /** Queues `write` for this turn's batch; resolves with whether it landed. */
  write(write: W): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queued.push({ write, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Sends `call` once this turn's writes are in, with the first of its batches (none if no write was asked for):
   * `call` sends them in its own round trip and answers whether each landed beside its own answer, which this
   * resolves with. If it fails, so does each write it took, with its error.
   */
  alongside<A extends { readonly landed: readonly boolean[] }>(call: (writes: readonly W[], timeoutMs: number | undefined) => Promise<A>): Promise<A> {
    return new Promise<A>((resolve, reject) => {
      this.riders.push({ call, resolve: resolve as (answer: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what was asked for, at most one write per key; the rest go next turn. */
  private flush(): void {
    this.scheduled = false;
    const keys = new Set<string>();
    const now: Array<Waiting<W>> = [];
    const later: Array<Waiting<W>> = [];
    for (const waiting of this.queued) {
      if (keys.has(waiting.write.key)) later.push(waiting);
      else {
        keys.add(waiting.write.key);
        now.push(waiting);
      }
    }
    this.queued = later;
    if (later.length > 0) this.schedule();
    const riders = this.riders;
    this.riders = [];
    const batches: Array<Array<Waiting<W>>> = [];
    for (let i = 0; i < now.length; i += this.most) batches.push(now.slice(i, i + this.most));
    riders.forEach((rider, i) => void this.ride(rider, batches[i] ?? []));
    for (const batch of batches.slice(riders.length)) void this.call(batch);
  }

  private async call(batch: Array<Waiting<W>>): Promise<void> {
    try {
      const landed = await this.send(batch.map((w) => w.write), deadlineOf(batch));
      batch.forEach((waiting, i) => waiting.resolve(landed[i] === true));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }

  private async ride(rider: Rider<W>, batch: Array<Waiting<W>>): Promise<void> {
    try {
      const answer = await rider.call(batch.map((w) => w.write), deadlineOf(batch));
      batch.forEach((waiting, i) => waiting.resolve(answer.landed[i] === true));
      rider.resolve(answer);
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      rider.reject(error);
    }
  }
}

/** A batch's deadline: the shortest of its writes' (none: the store's own). */
function deadlineOf<W extends BatchedWrite>(batch: ReadonlyArray<Waiting<W>>): number | undefined {
  const deadlines = batch.map((w) => w.write.timeoutMs).filter((ms): ms is number => ms !== undefined);
  return deadlines.length > 0 ? Math.min(...deadlines) : undefined;
}
