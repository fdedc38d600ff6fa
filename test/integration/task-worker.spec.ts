import { setTimeout as sleep } from 'node:timers/promises';
import type { GroupJoinData, TaskRecord } from '../../lib/store/tasks/task';
import type { TaskStore } from '../../lib/store/tasks/task-store';
import { InvalidTaskError } from '../../lib/tasks/errors/invalid-task.error';
import { RetryLaterError } from '../../lib/tasks/errors/retry-later.error';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';
import type { TaskWorker } from '../../lib/tasks/task-worker';
import { eventually } from '../support/eventually';
import { TASK_STORES, taskNodes, type TestWorkerOptions } from '../support/task-nodes';
import { LeaseLostError } from '../../lib/core/errors/lease-lost.error';
import { reserves } from '../../lib/tasks/task-pulls';

/**
 * Task workers (nodes in one process), each with a store of its own, through the same rules and store calls a
 * cluster uses: the seed's recon example across three workers, idempotent submits, priority, retries, invalid
 * tasks and a worker that stops renewing (its late completion is refused).
 */
describe.each(TASK_STORES)('TaskWorker (seed 004) on %s', (_name, cluster) => {
  const nodes = taskNodes(cluster);
  const { stores } = nodes;
  const worker = (name: string, options: TestWorkerOptions = {}): Promise<TaskWorker> => nodes.worker(name, options);
  const task = async (id: string): Promise<TaskRecord | undefined> => (await stores[0].read(id)).task;

  it('runs the seed’s recon example across three workers: every sub-task once, one join with 100 results, then the parent’s join', async () => {
    const ran = new Map<number, string>();
    const joins: GroupJoinData[] = [];
    const parentJoins: GroupJoinData[] = [];
    const nodes = await Promise.all(['a', 'b', 'c'].map((n) => worker(n)));
    for (const [i, w] of nodes.entries()) {
      w.handle('recon-parent', async (_data, context) => {
        for (let n = 1; n <= 100; n++) {
          await context.submit({ type: 'recon-record-set', group: { name: 'recon-system-x', number: n, ...(n === 100 && { total: 100 }) }, data: { batch: n } });
        }
        return 'split into 100';
      }, { leaseMs: 60_000 }); // 100 submits one after another: a loaded machine must not outlive the lease meanwhile
      w.handle('recon-record-set', async (data) => {
        const { batch } = data as { batch: number };
        if (ran.has(batch)) throw new Error(`batch ${batch} ran twice`);
        ran.set(batch, `node ${i}`);
        await sleep(2);
        return { reconciled: batch };
      }, { leaseMs: 2_000 });
      w.onGroupFinished('recon-record-set', (join) => {
        joins.push(join);
        return { batches: Object.keys(join.results).length };
      });
      w.onGroupFinished('recon-parent', (join) => {
        parentJoins.push(join);
      });
      w.start();
    }
    await nodes[0].submit({ type: 'recon-parent', name: 'recon-system-x' });
    await eventually('the parent’s join', () => parentJoins.length === 1, { timeoutMs: 20_000 });
    expect(ran.size).toBe(100);
    expect(new Set(ran.values()).size).toBeGreaterThan(1); // spread over the workers
    expect(joins).toHaveLength(1);
    expect(Object.keys(joins[0].results)).toHaveLength(100);
    expect(joins[0]).toMatchObject({ group: 'recon-system-x', total: 100, errors: {}, failedFast: false });
    expect(parentJoins[0]).toMatchObject({ group: 'recon-system-x', type: 'recon-parent', results: { 'recon-record-set:recon-system-x': { batches: 100 } } });
    await sleep(300);
    expect(joins).toHaveLength(1);
    expect(parentJoins).toHaveLength(1);
  });

  it('a node that dies between a grouped task’s finish and its group write: another node’s scan counts it, and the join comes once', async () => {
    const a = await worker('a');
    // a "dies" right after each finish write: its group writes never happen.
    stores[0].compareAndSetGroup = async () => {
      throw new Error('a died');
    };
    a.handle('part', async (data) => data);
    a.start();
    for (const number of [1, 2]) await a.submit({ type: 'part', group: { name: 'g', number, ...(number === 2 && { total: 2 }) }, data: number });
    await eventually('both done, uncounted', async () => (await stores[0].uncounted(['part'], 10)).length === 2);
    await a.stop(100);
    const joins: GroupJoinData[] = [];
    const b = await worker('b');
    b.handle('part', async (data) => data);
    b.onGroupFinished('part', (join) => {
      joins.push(join);
    });
    b.start();
    await eventually('the join', () => joins.length === 1);
    expect(joins[0]).toMatchObject({ group: 'g', total: 2, results: { 1: 1, 2: 2 } });
    await eventually('counted', async () => (await stores[1].uncounted(['part'], 10)).length === 0);
    await sleep(300);
    expect(joins).toHaveLength(1);
  });

  /** Makes `method` of the last store land its write and then throw, as a call whose answer was lost, while `when` says so. */
  function loseAnswers(method: 'compareAndSet' | 'compareAndSetGroup', when: (args: unknown[]) => boolean): void {
    const store = stores.at(-1)! as unknown as Record<string, (...args: unknown[]) => Promise<boolean>>;
    const real = store[method].bind(store);
    store[method] = async (...args: unknown[]) => {
      const landed = await real(...args);
      if (landed && when(args)) throw new StoreUnavailableError('the write landed, its answer was lost'); // as a store reports it
      return landed;
    };
  }

  it('a group write whose answer was lost still ends in exactly one join', async () => {
    const joins: GroupJoinData[] = [];
    const a = await worker('a');
    loseAnswers('compareAndSetGroup', () => true);
    a.handle('part', async (data) => data);
    a.onGroupFinished('part', (join) => {
      joins.push(join);
    });
    a.start();
    for (const number of [1, 2]) await a.submit({ type: 'part', group: { name: 'g', number, ...(number === 2 && { total: 2 }) }, data: number });
    await eventually('the join', () => joins.length === 1);
    await eventually('both counted', async () => (await stores[0].uncounted(['part'], 10)).length === 0);
    await sleep(300);
    expect(joins).toHaveLength(1);
  });

  it('a claim whose answer was lost runs at once, on one attempt', async () => {
    const runs: number[] = [];
    const a = await worker('a');
    loseAnswers('compareAndSet', (args) => (args[2] as TaskRecord | null)?.state === 'running');
    a.handle('job', async (_data, context) => {
      runs.push(context.attempt);
    }, { leaseMs: 5_000 });
    a.start();
    await a.submit({ type: 'job', name: 'x' });
    await eventually('done', async () => (await task('job:x'))?.state === 'done');
    expect(runs).toEqual([1]); // run at once: one that waited for the 5 s lease to lapse would be attempt 2, after a lapsed one
    expect((await task('job:x'))!.attempts.map((x) => x.outcome)).toEqual(['done']);
  });

  it('a claim whose answer comes back after its lease is never run (another node may hold it): it is handed back', async () => {
    const LATE_LEASE_MS = 1_000;
    const starts: Array<{ node: string; left: number }> = [];
    const a = await worker('a');
    const store = stores.at(-1)! as unknown as Record<string, (...args: unknown[]) => Promise<boolean>>;
    const real = store.compareAndSet.bind(store);
    let slowed = false;
    let answered = false;
    store.compareAndSet = async (...args: unknown[]) => {
      const landed = await real(...args);
      if (!slowed && (args[2] as TaskRecord | null)?.state === 'running') {
        slowed = true;
        await sleep(LATE_LEASE_MS + 500); // the answer arrives after the lease
        setImmediate(() => (answered = true));
      }
      return landed;
    };
    // A store that claims in its reserve: that answer comes late instead.
    const reserve = (store as unknown as TaskStore).reserve?.bind(store);
    if (reserve) {
      (store as unknown as TaskStore).reserve = async (...args) => {
        const got = await reserve(...args);
        if (!slowed && got.claimed.length > 0) {
          slowed = true;
          await sleep(LATE_LEASE_MS + 500);
          setImmediate(() => (answered = true));
        }
        return got;
      };
    }
    const b = await worker('b');
    for (const [w, node] of [[a, 'a'], [b, 'b']] as const) {
      w.handle('job', async (_data, context) => {
        starts.push({ node, left: context.expiresAt - Date.now() });
      }, { leaseMs: LATE_LEASE_MS }); // long enough that b's own claims, on a loaded machine, are answered within it
    }
    await a.submit({ type: 'job', name: 'late' });
    a.start();
    await eventually('claimed by a, slowly', () => slowed);
    b.start();
    await eventually('done', async () => (await task('job:late'))?.state === 'done', { timeoutMs: LATE_LEASE_MS + 10_000 });
    await eventually('a heard its late answer', () => answered);
    expect(starts.filter((x) => x.left <= 0)).toEqual([]); // nobody ran on a lease that had run out
    expect(starts).toHaveLength(1);
  });

  it('a completion whose answer was lost is read back: accepted once, reported as completed, not run again', async () => {
    const events: string[] = [];
    let runs = 0;
    const a = await worker('a', { onEvent: (event) => events.push(`${event.kind} ${'task' in event ? event.task.id : event.id}`) });
    loseAnswers('compareAndSet', (args) => (args[2] as TaskRecord | null)?.state === 'done');
    const leaseMs = 1_000; // the run's claim and completion land within it, even on a loaded machine
    a.handle('job', async () => {
      runs++;
      return 'ok';
    }, { leaseMs });
    a.start();
    await a.submit({ type: 'job', name: 'x' });
    await eventually('reported', () => events.includes('completed job:x'));
    await sleep(2 * leaseMs); // two leases: a completion taken for lost would lapse and run again
    expect(runs).toBe(1);
    expect(events.filter((e) => e.endsWith('job:x'))).toEqual(['claimed job:x', 'completed job:x']);
    expect((await task('job:x'))!.attempts.map((x) => x.outcome)).toEqual(['done']);
  });

  it('the parent’s join comes even when the node that finished the sub-group’s join died right after', async () => {
    const parentJoins: GroupJoinData[] = [];
    const a = await worker('a');
    // a finishes the sub-group's join, and dies before it can submit the parent's join.
    loseAnswers('compareAndSet', (args) => (args[2] as TaskRecord | null)?.type === 'part#group-finished' && (args[2] as TaskRecord).state === 'done');
    a.handle('parent', async (_data, context) => {
      for (const number of [1, 2]) await context.submit({ type: 'part', group: { name: 'p', number, ...(number === 2 && { total: 2 }) }, data: number });
    });
    a.handle('part', async (data) => data);
    a.onGroupFinished('part', (join) => Object.keys(join.results).length);
    a.start();
    await a.submit({ type: 'parent', name: 'p' });
    await eventually('the sub-group’s join done', async () => (await task('part#group-finished:p'))?.state === 'done');
    await a.stop(100);
    const b = await worker('b');
    b.handle('part', async (data) => data);
    b.onGroupFinished('part', (join) => Object.keys(join.results).length);
    b.onGroupFinished('parent', (join) => {
      parentJoins.push(join);
    });
    b.start();
    await eventually('the parent’s join', () => parentJoins.length === 1);
    expect(parentJoins[0]).toMatchObject({ type: 'parent', group: 'p', results: { 'part:p': 2 } });
  });

  it('a parent with several sub-groups joins once, after the last of them, with each one’s join result', async () => {
    const parentJoins: GroupJoinData[] = [];
    const nodes = await Promise.all(['a', 'b'].map((n) => worker(n)));
    for (const w of nodes) {
      w.handle('import', async (_data, context) => {
        for (const [type, count] of [['accounts', 3], ['orders', 5]] as const) {
          for (let number = 1; number <= count; number++) {
            await context.submit({ type, group: { name: 'feed-7', number, ...(number === count && { total: count }) }, data: number });
          }
        }
      });
      w.handle('accounts', async (data) => data);
      w.handle('orders', async (data) => {
        await sleep(30); // the second sub-group ends well after the first
        return data;
      });
      w.onGroupFinished('accounts', (join) => Object.keys(join.results).length);
      w.onGroupFinished('orders', (join) => Object.keys(join.results).length);
      w.onGroupFinished('import', (join) => {
        parentJoins.push(join);
      });
      w.start();
    }
    await nodes[0].submit({ type: 'import', name: 'feed-7' });
    await eventually('the parent’s join', () => parentJoins.length === 1, { timeoutMs: 10_000 });
    expect(parentJoins[0]).toEqual({ type: 'import', group: 'feed-7', total: 2, results: { 'accounts:feed-7': 3, 'orders:feed-7': 5 }, errors: {}, failedFast: false });
    expect((await task('orders#group-finished:feed-7'))?.state).toBe('done');
    await sleep(300);
    expect(parentJoins).toHaveLength(1);
  });

  it('purges finished tasks after the retention window, with their group’s record, so the ids can run again', async () => {
    const joins: GroupJoinData[] = [];
    const a = await worker('a', { retentionMs: 200, purgeMs: 50 });
    a.handle('part', async (data) => data);
    a.onGroupFinished('part', (join) => {
      joins.push(join);
    });
    a.start();
    const submitAll = async () => {
      for (const number of [1, 2]) await a.submit({ type: 'part', group: { name: 'g', number, ...(number === 2 && { total: 2 }) }, data: number });
    };
    await submitAll();
    await eventually('the join', () => joins.length === 1);
    await eventually('all purged', async () => (await stores[0].query({})).length === 0 && !(await stores[0].readGroup('part:g')).group);
    await submitAll(); // after the retention window: a new run, with a join of its own
    await eventually('the second join', () => joins.length === 2);
  });

  it('a task whose lease lapsed as often as its attempts allow fails, and its group still joins', async () => {
    const joins: GroupJoinData[] = [];
    const a = await worker('a');
    a.handle('part', () => new Promise(() => undefined), { leaseMs: 500, maxAttempts: 2 }); // never ends, never renews; a slow claim answer fits in the lease
    a.onGroupFinished('part', (join) => {
      joins.push(join);
    });
    a.start();
    await a.submit({ type: 'part', group: { name: 'g', number: 1, total: 1 } });
    await eventually('the join', () => joins.length === 1);
    expect(joins[0].errors).toEqual({ 1: expect.stringContaining('lease lapsed') });
    const failed = (await task('part:g:1'))!;
    expect(failed.state).toBe('failed');
    expect(failed.attempts.map((x) => x.outcome)).toEqual(['lapsed', 'lapsed']);
  });

  it('shutdown hands back at once a task whose handler ignores its abort signal, and another node runs it', async () => {
    const a = await worker('a');
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    a.handle('hang', () => {
      started();
      return new Promise(() => undefined);
    }, { leaseMs: 60_000 });
    a.start();
    await a.submit({ type: 'hang', name: 'x' });
    await running;
    await a.stop(50); // resolves although the handler never does
    const back = (await task('hang:x'))!;
    expect(back.state).toBe('pending');
    expect(back.claim).toBeUndefined();
    const b = await worker('b');
    b.handle('hang', () => 'ran on b');
    b.start();
    await eventually('b ran it', async () => (await task('hang:x'))?.state === 'done');
    expect((await task('hang:x'))!.result).toBe('ran on b');
  });

  it('one id submitted three times, from three workers, is one task and one run', async () => {
    let runs = 0;
    const nodes = await Promise.all(['a', 'b', 'c'].map((n) => worker(n)));
    for (const w of nodes) {
      w.handle('check', async () => {
        runs++;
      });
      w.start();
    }
    const submitted = await Promise.all(nodes.map((w) => w.submit({ type: 'check', name: 'database-2026-11-23T01:00' })));
    expect(new Set(submitted.map((t) => t.seq)).size).toBe(1);
    await eventually('done', async () => (await task('check:database-2026-11-23T01:00'))?.state === 'done');
    await sleep(200);
    expect(runs).toBe(1);
  });

  it('claims higher priority first, retries with backoff up to maxAttempts, and hands invalid tasks to the invalid handler', async () => {
    const order: string[] = [];
    const invalid: string[] = [];
    const w = await worker('a', { concurrency: 1, onInvalid: (t, error) => invalid.push(`${t.id}: ${error}`) });
    w.handle('job', async (data) => {
      order.push(String(data));
      if (data === 'flaky') throw new Error('not yet');
      if (data === 'bad') throw new InvalidTaskError('no such account');
    }, { maxAttempts: 3, backoff: { baseMs: 50, factor: 2, maxMs: 1_000 } });
    await w.submit({ type: 'job', name: 'low', data: 'low', priority: 0 });
    await w.submit({ type: 'job', name: 'high', data: 'high', priority: 9 });
    await w.submit({ type: 'job', name: 'flaky', data: 'flaky', priority: 5 });
    await w.submit({ type: 'job', name: 'bad', data: 'bad', priority: 1 });
    w.start();
    await eventually('all finished', async () => (await task('job:flaky'))?.state === 'failed' && (await task('job:low'))?.state === 'done');
    expect(order.slice(0, 3)).toEqual(['high', 'flaky', 'bad']);
    expect(order.filter((x) => x === 'flaky')).toHaveLength(3);
    const flaky = (await task('job:flaky'))!;
    expect(flaky.attempts.map((a) => a.outcome)).toEqual(['failed', 'failed', 'failed']);
    expect(flaky.attempts[1].startedAt - flaky.attempts[0].endedAt!).toBeGreaterThanOrEqual(50);
    expect(invalid).toEqual(['job:bad: no such account']);
    expect((await task('job:bad'))!.state).toBe('invalid');
  });

  it('claims a task an event brought without asking the store: at most two calls a task (claim, complete), no query; three where it reserves', async () => {
    const w = await worker('a', { scanMs: 600_000 });
    const ran: unknown[] = [];
    w.handle('job', async (data) => {
      ran.push(data);
    });
    w.start();
    await eventually('its first query', () => stores[0].operationCount() >= 1);
    const submitter = await worker('submitter'); // not started: claims nothing
    const before = stores[0].operationCount();
    for (let n = 1; n <= 5; n++) await submitter.submit({ type: 'job', name: `e${n}`, data: n });
    // Read through the submitter's store: the worker's counts the worker's calls only.
    await eventually('all done', async () => (await Promise.all([1, 2, 3, 4, 5].map((n) => stores[1].read(`job:e${n}`)))).every((r) => r.task?.state === 'done'));
    expect(ran.sort()).toEqual([1, 2, 3, 4, 5]);
    // At most two calls a task (writes asked for together may share one, as PostgreSQL's do); a store that hands work
    // out one worker at a time is asked for each task first (the wake carries no task): at most three.
    expect(stores[0].operationCount() - before).toBeLessThanOrEqual(reserves(stores[0]) ? 15 : 10);
  });

  it('a backlog larger than one query: tasks events bring never overtake older or higher ones the node has not read yet', async () => {
    const submitter = await worker('submitter'); // not started: claims nothing
    for (let n = 0; n < 300; n++) await submitter.submit({ type: 'job', name: `high-${n}`, priority: 5, data: 5 });
    // The order claims are sent in is the order the node promises; a round's claims (up to concurrency) go at once, and
    // each handler starts when its own answer comes back, so within the last round a low one may start first.
    const store = await nodes.store();
    const write = store.compareAndSet.bind(store);
    const claimed: string[] = [];
    store.compareAndSet = (id, expected, next, options) => {
      if (next?.state === 'running') claimed.push(id);
      return write(id, expected, next, options);
    };
    // A store that claims in its reserve: what it claimed there, in the order it answered.
    const reserve = store.reserve?.bind(store);
    if (reserve) {
      store.reserve = async (...args) => {
        const got = await reserve(...args);
        claimed.push(...got.claimed.map((t) => t.id));
        return got;
      };
    }
    const w = await nodes.worker('a', { scanMs: 600_000, concurrency: 2 }, store); // no scan: only the claim path refills its list
    const order: number[] = [];
    w.handle('job', async (data) => {
      order.push(data as number);
    });
    w.start();
    for (let n = 0; n < 20; n++) await submitter.submit({ type: 'job', name: `low-${n}`, priority: 1, data: 1 });
    await eventually('every task ran', () => order.length === 320, { timeoutMs: 30_000 });
    const firstLow = claimed.findIndex((id) => id.startsWith('job:low-'));
    // Every high one was claimed before the first low one (a late event may bring a high one again: its claim only fails).
    expect(new Set(claimed.slice(0, firstLow)).size).toBe(300);
    expect(order.indexOf(1)).toBeGreaterThanOrEqual(300 - 1); // at most the last high one shares its round with a low one
  });

  it('a retry asked for at once runs at once, though the event telling of it came while its run was still being recorded', async () => {
    const w = await worker('a', { scanMs: 600_000 });
    const attempts: number[] = [];
    w.handle('job', async (_data, context) => {
      attempts.push(context.attempt);
      if (context.attempt < 3) throw new RetryLaterError('again now', 0);
    });
    w.start();
    await w.submit({ type: 'job', name: 'now' });
    await eventually('three attempts', () => attempts.length === 3);
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('a handler registered after start finds the work already waiting, and a stopping node claims nothing more', async () => {
    const submitter = await worker('submitter');
    await submitter.submit({ type: 'early', name: 'x' });
    const w = await worker('a', { scanMs: 600_000 });
    w.handle('other', async () => undefined);
    w.start();
    const ran: string[] = [];
    w.handle('early', async (_data, context) => {
      ran.push(context.task.id);
    });
    await eventually('the waiting task ran', () => ran.includes('early:x'));
    await w.stop(100);
    await submitter.submit({ type: 'early', name: 'after-stop' });
    await eventually('the task is there, unclaimed', async () => (await stores[0].read('early:after-stop')).task?.state === 'pending');
    expect(ran).toEqual(['early:x']);
  });

  it('a claim whose answer was lost keeps its slot until its round settles, and its task is claimed again: never more than concurrency at once', async () => {
    const submitter = await worker('submitter');
    for (let n = 1; n <= 4; n++) await submitter.submit({ type: 'job', name: `j${n}` });
    const store = await nodes.store();
    const write = store.compareAndSet.bind(store);
    let lost = false;
    store.compareAndSet = async (id, expected, next, options) => {
      if (next?.state === 'running' && !lost) {
        lost = true;
        throw new Error('the answer was lost'); // and the claim did not land
      }
      if (next?.state === 'running') await sleep(200); // the round's other claim is slow
      return write(id, expected, next, options);
    };
    // A store that claims in its reserve: the answer of a reserve that claimed is lost, though its claims landed; the
    // next reserve asks for them again (they would otherwise wait out their lease, longer than this test allows).
    const reserve = store.reserve?.bind(store);
    if (reserve) {
      store.reserve = async (...args) => {
        const got = await reserve(...args);
        if (got.claimed.length > 0 && !lost) {
          lost = true;
          throw new Error('the answer was lost');
        }
        return got;
      };
    }
    let handling = 0;
    let most = 0;
    const errors: string[] = [];
    const w = await nodes.worker('a', { concurrency: 2, scanMs: 600_000, onError: (error) => errors.push(String(error)) }, store);
    w.handle('job', async () => {
      most = Math.max(most, ++handling);
      await sleep(400); // longer than a claim: handlers of two rounds would overlap
      handling--;
    });
    w.start();
    await eventually('the lost claim', () => lost);
    await submitter.submit({ type: 'job', name: 'j5' }); // its event kicks the node while the round's other claim is in flight
    await eventually('every task done', async () => (await Promise.all([1, 2, 3, 4, 5].map((n) => stores[0].read(`job:j${n}`)))).every((r) => r.task?.state === 'done'), { timeoutMs: 10_000 });
    expect(most).toBeLessThanOrEqual(2);
    expect(errors).toEqual([expect.stringContaining('the answer was lost')]);
  });

  it('submit order stays increasing for many submits within one millisecond', async () => {
    const frozen = { now: () => 1_800_000_000_000 };
    const submitter = await worker('submitter', { clock: frozen });
    const seqs: number[] = [];
    for (let n = 0; n < 1_005; n++) seqs.push((await submitter.submit({ type: 'job', name: `n${n}` })).seq);
    expect(seqs.every((seq, i) => i === 0 || seq > seqs[i - 1])).toBe(true);
  });

  it('refuses a lease no longer than the clock-skew bound, naming the type and the field', async () => {
    const w = await worker('a', { clockSkewMs: 500 });
    expect(() => w.handle('quick', async () => undefined, { leaseMs: 500 })).toThrow(/Task "quick": invalid lease: .*clock-skew bound \(500 ms\), got 500 ms/);
  });

  it('a handler that looks at its signal only after its lease ran out finds it aborted; one that never looks gives up its task all the same', async () => {
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    const looked: string[] = [];
    const events: string[] = [];
    // Frozen scan: nobody claims the lapsed tasks again, so what is left in the store is these runs' own doing.
    const a = await worker('a', { scanMs: 600_000, onEvent: (event) => events.push(`${event.kind} ${'task' in event ? event.task.id : event.id}`) });
    a.handle('looks-late', async (_data, context) => {
      started.push(context.task.id);
      await stuck;
      looked.push(`${context.signal.aborted} ${(context.signal.reason as Error | undefined)?.name}`);
    }, { leaseMs: 600 });
    a.handle('never-looks', async (_data, context) => {
      started.push(context.task.id);
      await stuck;
    }, { leaseMs: 600 });
    a.start();
    await a.submit({ type: 'looks-late', name: 'x' });
    await a.submit({ type: 'never-looks', name: 'y' });
    // Neither renews: at its lease's end (minus the skew bound) each run gives up its task, though no handler listened.
    await eventually('both started', () => started.length === 2, { timeoutMs: 10_000 });
    await eventually('both runs gave up their tasks', () => a.runningTasks().length === 0);
    release();
    await eventually('both outcomes refused', () => events.filter((e) => e.startsWith('rejected')).length === 2);
    expect(looked).toEqual([`true ${LeaseLostError.name}`]);
    // (A claim whose answer came back after its short lease is handed back unrun, and claimed again: not an outcome.)
    expect(events.filter((e) => !e.startsWith('claimed') && !e.startsWith('handed-back')).sort()).toEqual(['rejected looks-late:x', 'rejected never-looks:y']);
    for (const id of ['looks-late:x', 'never-looks:y']) expect((await task(id))?.state).toBe('running'); // no outcome written under a lapsed lease
  });

  it('a worker that stops renewing loses the task to another after the lease, and its late completion is refused', async () => {
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const lostSignals: string[] = [];
    const a = await worker('a', { scanMs: 600_000 }); // frozen: its scan does not come round either
    a.handle('job', async (_data, context) => {
      context.signal.addEventListener('abort', () => lostSignals.push(String((context.signal.reason as Error).name)), { once: true });
      await stuck; // never renews
      return 'from a';
    }, { leaseMs: 600 });
    a.start();
    await a.submit({ type: 'job', name: 'x' });
    await eventually('a runs it', () => a.runningTasks().includes('job:x'));
    const b = await worker('b');
    b.handle('job', async () => 'from b', { leaseMs: 10_000 }); // its run must not lapse too on a loaded machine: one lapse is the test's
    b.start();
    await eventually('b finished it', async () => (await task('job:x'))?.state === 'done');
    expect(lostSignals).toEqual([LeaseLostError.name]);
    release();
    await eventually('a gave up', () => !a.runningTasks().includes('job:x'));
    const done = (await task('job:x'))!;
    expect(done.result).toBe('from b');
    expect(done.attempts.map((x) => [x.acquirer, x.outcome])).toEqual([['a', 'lapsed'], ['b', 'done']]);
  });
});
