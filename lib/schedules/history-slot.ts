import type { RecordSlot } from '../store/read-decide-write';
import type { JobHistory } from './job-history';
import { encodeHistory } from './job-history.codec';
import type { HistoryStore, StoredHistory } from './history-store';

/**
 * A job's history as a slot of the one read-decide-write (`readDecideWrite`): `null` is an absent history. Every
 * call has the recorder's call deadline. A write whose answer was lost landed when the history read back is exactly
 * the text written (it carries this node's runs). {@link HistorySlot.landed} keeps what the write that landed stored.
 */
export class HistorySlot implements RecordSlot<StoredHistory | null, JobHistory> {
  /** The history as the last write that landed stored it (from its answer, or from the read that settled it). */
  landed?: StoredHistory;

  constructor(
    private readonly store: HistoryStore,
    private readonly job: string,
    private readonly timeoutMs: number,
  ) {}

  async read(): Promise<StoredHistory | null> {
    return (await this.store.read(this.job, this.timeoutMs)) ?? null;
  }

  async write(read: StoredHistory | null, next: JobHistory): Promise<boolean> {
    this.landed = await this.store.write(this.job, read ?? undefined, next, this.timeoutMs);
    return this.landed !== undefined;
  }

  holds(back: StoredHistory | null, next: JobHistory): boolean {
    if (back?.raw !== encodeHistory(next)) return false;
    this.landed = back;
    return true;
  }
}
