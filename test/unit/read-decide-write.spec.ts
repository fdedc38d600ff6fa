import type { RecordCallOptions } from '../../lib/store/record-map';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { systemClock } from '../../lib/core/clock';
import { QuorumLostError } from '../../lib/core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';
import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { HistoryRecorder } from '../../lib/schedules/history-recorder';
import type { StoredHistory } from '../../lib/schedules/history-store';
import { ScheduleCatalog } from '../../lib/schedules/schedule-catalog';
import type { ScheduleRecord } from '../../lib/schedules/schedule-record';
import { ScheduleRecordStore } from '../../lib/schedules/schedule-record.store';
import type { ScheduleCallOptions, VersionedSchedule } from '../../lib/schedules/schedule-store';
import type { JobHistory } from '../../lib/schedules/job-history';
import type { RecordMap, RecordWriteOptions, StoredRecord } from '../../lib/store/record-map';
import { updateRecord } from '../../lib/store/read-decide-write';
import type { TaskGroupRecord, TaskRecord } from '../../lib/store/tasks/task';
import { TaskAdmin } from '../../lib/tasks/task-admin';
import { TaskGroups } from '../../lib/tasks/task-groups';
import { TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import type { VersionedGroup, VersionedTask } from '../../lib/store/tasks/task-store';
import { TaskSubmits } from '../../lib/tasks/task-submits';

/** How the next write fails: it lands and its answer is lost (`landed`), or it fails before it lands (`lost`). */
type Failure = { readonly error: Error; readonly apply: boolean };
const answerLost = (apply = true): Failure => ({ error: new StoreUnavailableError('the connection dropped under the write'), apply });

/** A memory record map whose next writes fail as `failures` say (a real map under it: no mock of a client). */
function failingWrites(map: RecordMap, failures: Failure[]): RecordMap {
  const write = async (landed: () => Promise<boolean>): Promise<boolean> => {
    const failure = failures.shift();
    if (!failure) return landed();
    if (failure.apply) await landed();
    throw failure.error;
  };
  return Object.assign(Object.create(map) as RecordMap, {
    create: (key: string, value: string, options?: RecordWriteOptions) => write(() => map.create(key, value, options)),
    replace: (expected: StoredRecord, value: string, options?: RecordWriteOptions) => write(() => map.replace(expected, value, options)),
  });
}

async function memoryMap(): Promise<RecordMap> {
  const backend = new MemoryBackend();
  await backend.open();
  return backend.map('counts');
}

/** An increment of `count` in the one read-decide-write; `decisions` counts how often it decided. */
function increment(map: RecordMap, decisions: { n: number }): Promise<number> {
  return updateRecord(map, 'count', (current) => {
    decisions.n++;
    const next = Number(current?.value ?? 0) + 1;
    return { result: next, write: String(next) };
  }, { backoffMs: 0 });
}

describe('readDecideWrite settles a lost answer by one rule', () => {
  it('a write that landed and lost its answer stands: written once, decided once', async () => {
    const map = await memoryMap();
    const decisions = { n: 0 };
    expect(await increment(failingWrites(map, [answerLost()]), decisions)).toBe(1);
    expect([decisions.n, (await map.get('count'))?.value]).toEqual([1, '1']);
  });

  it('a write that lost its answer and did not land is decided again on what the read-back found', async () => {
    const map = await memoryMap();
    const decisions = { n: 0 };
    expect(await increment(failingWrites(map, [answerLost(false)]), decisions)).toBe(1);
    expect([decisions.n, (await map.get('count'))?.value]).toEqual([2, '1']);
  });

  it('a timeout or a quorum refusal is not settled: it is thrown, even when the write landed', async () => {
    for (const error of [new StoreTimeoutError('the write timed out'), new QuorumLostError('split-brain protection not met')]) {
      const map = await memoryMap();
      const decisions = { n: 0 };
      await expect(increment(failingWrites(map, [{ error, apply: true }]), decisions)).rejects.toBe(error);
      expect(decisions.n).toBe(1);
    }
  });

  it('throws the write\'s error when the read-back fails too', async () => {
    const backend = new MemoryBackend();
    await backend.open();
    const map = await backend.map('counts');
    const error = new StoreUnavailableError('the connection dropped under the write');
    const losing = Object.assign(Object.create(map) as RecordMap, {
      create: async () => {
        backend.failCalls('the store went away');
        throw error;
      },
    });
    await expect(increment(losing, { n: 0 })).rejects.toBe(error);
  });
});

/** The default task store on memory, whose next writes of a record that exists land and then lose their answer. */
class LosingTaskStore extends TaskRecordStore {
  /** Task writes (replaces) still to lose. */
  losingTasks = 0;
  /** Group writes (replaces) still to lose. */
  losingGroups = 0;

  override async compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, options?: RecordCallOptions): Promise<boolean> {
    const landed = await super.compareAndSet(id, expected, next, options);
    if (landed && expected.raw !== null && this.losingTasks > 0 && this.losingTasks--) throw answerLost().error;
    return landed;
  }

  override async compareAndSetGroup(id: string, expected: Pick<VersionedGroup, 'raw'>, next: TaskGroupRecord | null, options?: RecordCallOptions): Promise<boolean> {
    const landed = await super.compareAndSetGroup(id, expected, next, options);
    if (landed && expected.raw !== null && this.losingGroups > 0 && this.losingGroups--) throw answerLost().error;
    return landed;
  }
}

describe('task writes whose answer was lost are settled', () => {
  const options = { clock: systemClock, clockSkewMs: 0 };
  let store: LosingTaskStore;

  beforeEach(async () => {
    store = new LosingTaskStore(new MemoryBackend());
    await store.connect();
  });
  afterEach(() => store.close());

  it('an operator\'s cancel (a task record) that landed answers with the cancelled task', async () => {
    await new TaskSubmits(store, options).submit({ type: 'job', name: 'a' });
    store.losingTasks = 1;
    const cancelled = await new TaskAdmin(store, systemClock, { retentionMs: 60_000 }).cancel('job:a');
    expect(cancelled.state).toBe('cancelled');
    expect([store.losingTasks, (await store.read('job:a')).task?.state]).toEqual([0, 'cancelled']);
  });

  it('a count into a group (a group record) that landed goes on to clear the task\'s mark', async () => {
    await new TaskSubmits(store, options).submit({ type: 'part', group: { name: 'g', number: 1, total: 2 } });
    const ended = await new TaskAdmin(store, systemClock, { retentionMs: 60_000 }).cancel('part:g:1');
    expect(ended.uncounted).toBe(true);
    store.losingGroups = 1;
    await new TaskGroups(store, options).progress(ended);
    expect(store.losingGroups).toBe(0);
    expect(Object.keys((await store.readGroup('part:g')).group!.finished)).toEqual(['1']);
    expect((await store.read('part:g:1')).task?.uncounted).toBeUndefined();
  });
});

/** The history store on memory, whose next write lands and then loses its answer. */
class LosingHistoryStore extends HistoryRecordStore {
  losing = 0;

  override async write(job: string, expected: StoredHistory | undefined, next: JobHistory, timeoutMs?: number): Promise<StoredHistory | undefined> {
    const written = await super.write(job, expected, next, timeoutMs);
    if (written && this.losing > 0 && this.losing--) throw answerLost().error;
    return written;
  }
}

describe('a history write whose answer was lost is settled', () => {
  it('counts as written: the flush does not fail, and the run is stored once', async () => {
    const store = new LosingHistoryStore(new MemoryBackend());
    await store.connect();
    const failures: unknown[] = [];
    const recorder = new HistoryRecorder(store, {
      keep: 10, flushIntervalMs: 60_000, callTimeoutMs: 1_000, identity: { instance: 'i-1', node: 'node-1' }, clock: systemClock,
      onFlushFailed: (error) => failures.push(error),
    });
    recorder.finished(recorder.started({ job: 'Billing.run', trigger: 'manual', token: 1 }), 'completed', 5);
    store.losing = 1;
    await recorder.stop();
    expect([failures, store.losing]).toEqual([[], 0]);
    expect((await store.read('Billing.run'))!.history.runs.map((run) => run.outcome)).toEqual(['completed']);
    await store.close();
  });
});

/** The schedule store on memory, whose next write lands and then loses its answer. */
class LosingScheduleStore extends ScheduleRecordStore {
  losing = 0;
  writes = 0;

  override async compareAndSet(id: string, expected: Pick<VersionedSchedule, 'raw'>, next: ScheduleRecord, options?: ScheduleCallOptions): Promise<boolean> {
    this.writes++;
    const landed = await super.compareAndSet(id, expected, next, options);
    if (landed && this.losing > 0 && this.losing--) throw answerLost().error;
    return landed;
  }
}

describe('a schedule change whose answer was lost is settled', () => {
  it('is reported as made, written once', async () => {
    const store = new LosingScheduleStore(new MemoryBackend());
    await store.connect();
    store.losing = 1;
    const changed = await new ScheduleCatalog(store, { by: 'node-1' }).upsert({ id: 'nightly', cron: '0 3 * * *', handler: 'report', duration: '1m' });
    expect([changed.outcome, changed.revision > 0, store.losing, store.writes]).toEqual(['created', true, 0, 1]);
    expect((await store.read('nightly')).record?.revision).toBe(changed.revision);
    await store.close();
  });
});
