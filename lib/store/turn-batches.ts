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
 */
export class TurnBatches<W extends BatchedWrite> {
  private queued: Array<Waiting<W>> = [];
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
    for (let i = 0; i < now.length; i += this.most) void this.call(now.slice(i, i + this.most));
  }

  private async call(batch: Array<Waiting<W>>): Promise<void> {
    const deadlines = batch.map((w) => w.write.timeoutMs).filter((ms): ms is number => ms !== undefined);
    try {
      const landed = await this.send(batch.map((w) => w.write), deadlines.length > 0 ? Math.min(...deadlines) : undefined);
      batch.forEach((waiting, i) => waiting.resolve(landed[i] === true));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }
}
