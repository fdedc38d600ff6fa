import type { RecordCallOptions } from '../../lib/store/record-map';
import { TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import type { TaskRecord } from '../../lib/store/tasks/task';
import type { VersionedTask } from '../../lib/store/tasks/task-store';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';
import { ClaimTurns } from '../../lib/tasks/claim-turns';
import { TaskWorker } from '../../lib/tasks/task-worker';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';

/** Stores connected by a test, closed after it. */
const opened: TaskRecordStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

/** `store`, connected (and closed after the test). */
async function connected<S extends TaskRecordStore>(store: S): Promise<S> {
  await store.connect();
  opened.push(store);
  return store;
}

/** Submits `count` pending tasks of type `w` (t0, t1, ...) through `store`. */
async function submitPending(store: TaskRecordStore, clock: FakeClock, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const task = decideSubmit(undefined, { type: 'w', name: `t${i}` }, clock.now(), 60_000).task;
    expect(await store.compareAndSet(task.id, { raw: null }, task)).toBe(true);
  }
}

describe('a node working through a backlog deeper than one query answers', () => {
  it('asks again as soon as it claimed its way through an answer, not once per refresh window', async () => {
    // The clock never moves, so no refresh window (100 ms) ever passes: a node that waits for one before asking again
    // claims the first answer's 256 tasks and then nothing more (no scan comes round either).
    const clock = new FakeClock();
    const backend = new MemoryBackend();
    const submitter = await connected(new TaskRecordStore(backend.node()));
    const total = 700;
    await submitPending(submitter, clock, total);
    const worker = new TaskWorker(await connected(new TaskRecordStore(backend.node())), { instance: 'a/1', acquirer: 'a' }, { clock, clockSkewMs: 0, scanMs: 3_600_000, concurrency: 8 });
    let ran = 0;
    worker.handle('w', async () => {
      ran++;
    });
    worker.start();
    try {
      await eventually(`all ${total} tasks ran`, () => ran === total);
      const left = await submitter.query({ states: ['pending', 'running'] });
      expect(left).toEqual([]);
    } finally {
      await worker.stop(1_000);
    }
  });
});

/** A store that holds the answer to the first claim it is asked for until `release()`: a slow call. */
class OneSlowClaimStore extends TaskRecordStore {
  held?: string;
  private gate!: () => void;
  private readonly open = new Promise<void>((resolve) => (this.gate = resolve));

  override async compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, options?: RecordCallOptions): Promise<boolean> {
    if (this.held === undefined && next?.state === 'running') {
      this.held = id;
      const landed = await super.compareAndSet(id, expected, next, options);
      await this.open;
      return landed;
    }
    return super.compareAndSet(id, expected, next, options);
  }

  release(): void {
    this.gate();
  }
}

describe('a claim whose answer is slow', () => {
  it('holds its own slot only: the node claims and runs other work meanwhile, then runs the slow one', async () => {
    const clock = new FakeClock();
    const backend = new MemoryBackend();
    const total = 20;
    await submitPending(await connected(new TaskRecordStore(backend.node())), clock, total);
    const store = await connected(new OneSlowClaimStore(backend));
    const worker = new TaskWorker(store, { instance: 'a/1', acquirer: 'a' }, { clock, clockSkewMs: 0, scanMs: 3_600_000, concurrency: 2 });
    const ran: string[] = [];
    worker.handle('w', async (_data, context) => {
      ran.push(context.task.id);
    });
    worker.start();
    try {
      await eventually(`the other ${total - 1} tasks ran while one claim's answer was held`, () => ran.length === total - 1);
      expect(ran).not.toContain(store.held);
      store.release();
      await eventually('the slow claim ran once its answer came', () => ran.length === total);
      expect(new Set(ran).size).toBe(total);
    } finally {
      store.release();
      await worker.stop(1_000);
    }
  });
});

/** A store whose claims (a task's move to running) all fail: each throws, or each loses its race. */
class FailingClaimsStore extends TaskRecordStore {
  claims = 0;
  constructor(backend: MemoryBackend, private readonly how: 'throw' | 'lose') {
    super(backend);
  }

  override async compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, options?: RecordCallOptions): Promise<boolean> {
    if (next?.state !== 'running') return super.compareAndSet(id, expected, next, options);
    this.claims++;
    if (this.how === 'throw') throw new Error('the cluster refused the write');
    return false;
  }
}

describe.each(['throw', 'lose'] as const)('claims that all %s', (how) => {
  it('stop after a streak of failures until the refresh window passed, not in a loop with no wait', async () => {
    // The clock never moves, so the refresh window never passes: after its streak a node claims nothing more.
    const clock = new FakeClock();
    const backend = new MemoryBackend();
    await submitPending(await connected(new TaskRecordStore(backend.node())), clock, 50);
    const store = await connected(new FailingClaimsStore(backend, how));
    const concurrency = 4;
    const worker = new TaskWorker(store, { instance: 'a/1', acquirer: 'a' }, { clock, clockSkewMs: 0, scanMs: 3_600_000, concurrency, onError: () => undefined });
    worker.handle('w', async () => undefined);
    worker.start();
    try {
      const streak = 4 * concurrency;
      await eventually('the node to fail a streak of claims', () => store.claims >= streak);
      // Given time to spin (a loop with no wait made tens of thousands of claims in this window), it made no more
      // than the streak and the claims under way when it ended.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(store.claims).toBeLessThanOrEqual(streak + concurrency);
    } finally {
      await worker.stop(1_000);
    }
  });
});

/** A store that holds every claim's answer until `release()`, counting the claims asked for. */
class HeldClaimsStore extends TaskRecordStore {
  asked = 0;
  private gate!: () => void;
  private readonly open = new Promise<void>((resolve) => (this.gate = resolve));

  override async compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, options?: RecordCallOptions): Promise<boolean> {
    if (next?.state !== 'running') return super.compareAndSet(id, expected, next, options);
    this.asked++;
    await this.open;
    return super.compareAndSet(id, expected, next, options);
  }

  release(): void {
    this.gate();
  }
}

describe("a node's turn in a burst", () => {
  afterEach(() => jest.restoreAllMocks());

  it('counts its claims under way: a turn of one claim starts one, however many slots are free', async () => {
    jest.spyOn(ClaimTurns.prototype, 'turn').mockResolvedValue(1);
    const clock = new FakeClock();
    const backend = new MemoryBackend();
    await submitPending(await connected(new TaskRecordStore(backend.node())), clock, 20);
    const store = await connected(new HeldClaimsStore(backend));
    const worker = new TaskWorker(store, { instance: 'a/1', acquirer: 'a' }, { clock, clockSkewMs: 0, scanMs: 3_600_000, concurrency: 8 });
    worker.handle('w', async () => undefined);
    worker.start();
    try {
      await eventually('the first claim to be asked for', () => store.asked >= 1);
      // Time for more claims to start if the turn did not hold them (it took all 8 slots at once when it did not).
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(store.asked).toBe(1);
    } finally {
      store.release();
      await worker.stop(1_000);
    }
  });
});
