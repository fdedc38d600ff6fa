import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { HistoryRecorder } from '../../lib/schedules/history-recorder';
import type { JobHistory } from '../../lib/schedules/job-history';
import type { StoredHistory } from '../../lib/schedules/history-store';
import { systemClock } from '../../lib/core/clock';

/** A history store whose writes wait until the test lets them through: a write under way while runs go on. */
class HeldWrites extends HistoryRecordStore {
  private gate?: { opened: Promise<boolean>; reached: () => void };

  /**
   * Holds the next write until `release` (which lets it land, or with `fail` has it fail as a store that went away);
   * `reached` settles when it is waiting.
   */
  hold(): { reached: Promise<void>; release: (fail?: boolean) => void } {
    let open!: (fail: boolean) => void;
    let reached!: () => void;
    const opened = new Promise<boolean>((resolve) => (open = resolve));
    const reachedGate = new Promise<void>((resolve) => (reached = resolve));
    this.gate = { opened, reached };
    return { reached: reachedGate, release: (fail = false) => { this.gate = undefined; open(fail); } };
  }

  override async write(job: string, expected: StoredHistory | undefined, next: JobHistory, timeoutMs?: number): Promise<StoredHistory | undefined> {
    const gate = this.gate;
    if (gate) {
      gate.reached();
      if (await gate.opened) throw new Error('store down');
    }
    return super.write(job, expected, next, timeoutMs);
  }
}

describe('the run history a node writes', () => {
  async function recorder(keep: number) {
    const store = new HeldWrites(new MemoryBackend());
    await store.connect();
    return { store, recorder: new HistoryRecorder(store, { keep, flushIntervalMs: 60_000, callTimeoutMs: 1_000, identity: { instance: 'i', node: 'n' }, clock: systemClock }) };
  }
  const run = (r: HistoryRecorder, token: number) => r.finished(r.started({ job: 'j', trigger: 'schedule', instant: token * 1000, token }), 'completed', 1);

  /**
   * Runs 1 and 2 end, a flush's write of them is held, five more end meanwhile (more wait than the node keeps, 5),
   * then the write lands (or fails, with `fail`).
   */
  async function runsEndDuringAWrite(fail: boolean) {
    const { store, recorder: r } = await recorder(5);
    run(r, 1);
    run(r, 2);
    const held = store.hold();
    const first = r.flush();
    await held.reached;
    for (let token = 3; token <= 7; token++) run(r, token);
    held.release(fail);
    await first;
    return { store, r };
  }

  it('counts each run once when more than it keeps end while a write of them is under way', async () => {
    const { store, r } = await runsEndDuringAWrite(false);
    await r.flush();
    const history = (await store.read('j'))!.history;
    expect(history.counts).toEqual({ completed: 7 });
    expect(history.runs.map((x) => x.token)).toEqual([7, 6, 5, 4, 3]);
  });

  it('counts runs let go unwritten once the store answers again, when the write under way failed', async () => {
    const { store, r } = await runsEndDuringAWrite(true);
    run(r, 8);
    run(r, 9);
    await r.flush();
    const history = (await store.read('j'))!.history;
    expect(history.counts).toEqual({ completed: 9 });
    expect(history.runs.map((x) => x.token)).toEqual([9, 8, 7, 6, 5]);
  });
});
