import { ManualClock } from '../../lib/core/clock';
import type { AcquireResult } from '../../lib/permits/acquire-result';
import { DenyReason } from '../../lib/permits/deny-reason';
import type { Permit } from '../../lib/permits/permit';
import { PermitDecisions } from '../../lib/permits/permit-decisions';
import type { PermitEngine } from '../../lib/permits/permit.engine';
import { PermitExecutor } from '../../lib/permits/permit-executor';
import type { PermitLease } from '../../lib/permits/permit-lease';
import { LATE_DECISION } from '../../lib/schedules/late-tick.rules';
import { JobRunner } from '../../lib/schedules/run/job-runner';
import { DUPLICATE_TICK, NOT_A_FIRE_INSTANT, OVERLAP } from '../../lib/schedules/run/run-gate';
import type { RunLog } from '../../lib/schedules/run/run-log';
import { RunObservers, type RunPipelineObserver } from '../../lib/schedules/run/run-observers';
import type { JobCalendar, JobRunPolicy, ScheduledJob } from '../../lib/schedules/run/scheduled-job';
import { DEFAULT_JOB_HEALTH } from '../../lib/schedules/job-policy';

const MINUTE = 60_000;

/** A calendar firing every minute; `holes` are minutes the cron package's timer fires at that are not fire instants. */
function everyMinute(holes: number[] = []): JobCalendar {
  return {
    expression: '* * * * *', timeZone: 'UTC', shortestGapMs: MINUTE,
    instantFor: (now) => (holes.includes(Math.floor(now / MINUTE) * MINUTE) ? undefined : Math.floor(now / MINUTE) * MINUTE),
    next: (from, count) => Array.from({ length: count }, (_, i) => (Math.floor(from / MINUTE) + 1 + i) * MINUTE),
    firesBetween: () => ({ count: 0 }),
  };
}

const policy = (extra: Partial<JobRunPolicy> = {}): JobRunPolicy => ({
  semaphore: 'billing', mode: 'hold', lockAtLeastForMs: 0, keepAlive: false, maxRunTimeMs: undefined, overlap: 'skip',
  replaceWaitMs: 5_000, missedRuns: 'skip', catchUpWindowMs: undefined, oncePerInstant: true, health: DEFAULT_JOB_HEALTH, ...extra,
});

/** Everything an observer hears, as one line per call. */
function recording(into: string[], name: string): RunPipelineObserver {
  return {
    permitHeld: (job, token, fresh) => into.push(`${name} held ${job.name} ${token} ${fresh ? 'granted' : 'refreshed'}`),
    permitDenied: (job, denied, lost) => into.push(`${name} denied ${job.name} ${denied.reason}${lost ? ' lost' : ''}`),
    started: (run) => into.push(`${name} started ${run.job} ${run.trigger}${run.request ? ` ${run.request}` : ''}`),
    ended: (run, end) => into.push(`${name} ended ${run.job} ${end.outcome}`),
    skipped: (skip) => into.push(`${name} skipped ${skip.job} ${skip.reason}`),
    late: (job, run, lateByMs) => into.push(`${name} late ${job.name} ${run.instant} ${lateByMs}`),
  };
}

/**
 * The runner of lib/schedules/run on its own, no Nest: the real executor and decisions over an engine whose answers
 * the test sets (the store's behaviour is the contract and fault suites'), on a manual clock.
 */
function setUp() {
  const clock = new ManualClock(10 * MINUTE + 1_000);
  const token = 1;
  let denied: DenyReason | undefined;
  const permit = (): Permit => ({
    semaphore: 'billing', acquirer: 'a', group: 'g', instance: 'i', fencingToken: token,
    grantedAt: clock.now(), refreshedAt: clock.now(), expiresAt: clock.now() + MINUTE,
  });
  let stallMs = 0;
  let vacantSince: number | undefined;
  let knownSince: number | undefined;
  const answer = async (): Promise<AcquireResult> => (clock.advance(stallMs), denied
    ? { granted: false, semaphore: 'billing', reason: denied, message: 'set by the test' }
    : { granted: true, outcome: 'granted', permit: permit(), ...(vacantSince !== undefined && { vacantSince }) });
  const engine = { tryAcquire: answer, refresh: answer, release: async () => 'released', newsAgainst: () => undefined, watch: () => () => undefined } as unknown as PermitEngine;
  const untraced = { span: <T>(_n: string, _a: object, work: (span: { set(): void }) => Promise<T>) => work({ set: () => undefined }) };
  const decisions = new PermitDecisions(engine, clock, 0, untraced, { note: () => undefined, releaseFailed: () => undefined });
  decisions.phase = 'ready';
  const lines: string[] = [];
  const log: RunLog = { debug: () => undefined, verbose: () => undefined, log: (m) => lines.push(`log ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) };
  const heard: string[] = [];
  const observers = new RunObservers([recording(heard, 'own')], log);
  const jobs = new Map<string, ScheduledJob>();
  const executor = new PermitExecutor(decisions);
  let current: PermitLease | undefined;
  const runner = new JobRunner({
    // The lease is kept where the job's code reads it (the executor also puts it in async context).
    permits: { run: (semaphore, work, options) => executor.run(semaphore, (lease, grant) => ((current = lease), work(lease, grant)), options) }, observers, history: { knownSince: async () => knownSince, vacant: () => undefined }, clock, permitClock: clock, log, job: (name) => jobs.get(name),
  });
  const job = (name: string, invoke: () => unknown, extra: Partial<ScheduledJob> = {}): ScheduledJob => {
    const made: ScheduledJob = { name, options: policy(), invoke, ...extra };
    jobs.set(name, made);
    return made;
  };
  return {
    clock, runner, observers, heard, lines, job,
    lease: () => current!,
    deny: (reason: DenyReason | undefined) => (denied = reason),
    /** Each decision takes this long (a stalled store). */
    stall: (ms: number) => (stallMs = ms),
    /** A fresh grant says nobody could run the job since `at`. */
    vacant: (at: number) => (vacantSince = at),
    /** The history knows the jobs since `at`. */
    known: (at: number) => (knownSince = at),
  };
}

describe('JobRunner (lib/schedules/run, no Nest)', () => {
  it('runs a tick under its permit and tells every observer in order, the users\' after the library\'s', async () => {
    const { runner, observers, heard, job } = setUp();
    observers.add(recording(heard, 'user'));
    const value = await runner.run(job('Jobs.charge', () => 'charged'), { kind: 'tick' });
    expect(value).toBe('charged');
    expect(heard).toEqual([
      'own held Jobs.charge 1 granted', 'own started Jobs.charge schedule', 'user started Jobs.charge schedule',
      'own ended Jobs.charge completed', 'user ended Jobs.charge completed',
    ]);
  });

  it('goes on past an observer that throws: the run and the observers after it are not affected', async () => {
    const { runner, observers, heard, lines, job } = setUp();
    observers.add({ started: () => { throw new Error('observer broke'); } });
    observers.add(recording(heard, 'user'));
    expect(await runner.run(job('Jobs.charge', () => 'charged'), { kind: 'tick' })).toBe('charged');
    expect(heard).toContain('user started Jobs.charge schedule');
    expect(heard).toContain('user ended Jobs.charge completed');
    expect(lines).toContainEqual(expect.stringMatching(/^warn a run observer failed at started .*observer broke/));
  });

  it('says a scheduled run that starts past its grace is late, once, with how late; within it, or with no grace, nothing', async () => {
    const { runner, heard, job, clock } = setUp();
    const graced = (graceMs: number | undefined) => policy({ health: { ...DEFAULT_JOB_HEALTH, graceMs } });
    // The clock is 1 s past the minute: the tick's instant is that minute.
    await runner.run(job('Jobs.strict', () => undefined, { trigger: everyMinute(), options: graced(500) }), { kind: 'tick' });
    await runner.run(job('Jobs.lenient', () => undefined, { trigger: everyMinute(), options: graced(5_000) }), { kind: 'tick' });
    await runner.run(job('Jobs.none', () => undefined, { trigger: everyMinute(), options: graced(undefined) }), { kind: 'tick' });
    // A run now is not scheduled: never late.
    await runner.run(job('Jobs.manual', () => undefined, { trigger: everyMinute(), options: graced(0) }), { kind: 'manual', manual: { request: 'r1', claim: async () => true } });
    expect(heard.filter((line) => line.includes(' late '))).toEqual([`own late Jobs.strict ${10 * MINUTE} ${clock.now() - 10 * MINUTE}`]);
  });

  it('ends a failing run as failed, rejects with its error, and tells a denial as a skip with its reason', async () => {
    const { runner, heard, job, deny } = setUp();
    await expect(runner.run(job('Jobs.fail', () => { throw new Error('boom'); }), { kind: 'tick' })).rejects.toThrow('boom');
    expect(heard).toContain('own ended Jobs.fail failed');
    deny(DenyReason.NO_PERMIT_AVAILABLE);
    expect(await runner.run(job('Jobs.other', () => 'never'), { kind: 'tick' })).toBeUndefined();
    expect(heard.slice(-2)).toEqual(['own denied Jobs.other NO_PERMIT_AVAILABLE', 'own skipped Jobs.other NO_PERMIT_AVAILABLE']);
  });

  it('says a held job was lost when it is denied after running here', async () => {
    const { runner, heard, job, deny } = setUp();
    const billing = job('Jobs.charge', () => 'charged');
    await runner.run(billing, { kind: 'tick' });
    deny(DenyReason.NO_PERMIT_AVAILABLE);
    await runner.run(billing, { kind: 'tick' });
    expect(heard).toContain('own denied Jobs.charge NO_PERMIT_AVAILABLE lost');
  });

  it('at start-up, catches up only instants before the timers were armed: one that came since is the timer\'s', async () => {
    const { clock, runner, observers, heard, job, vacant, known } = setUp();
    // Every minute; nobody could run it since minute 5; the node armed its timers at 9:59.9, and it is 10:00.5 when
    // the catch-up is decided: minute 10 came after the arming, so its timer fires it, and the catch-up runs 9.
    const calendar: JobCalendar = {
      ...everyMinute(),
      firesBetween: (from, before) => {
        const instants = Array.from({ length: 20 }, (_, i) => i * MINUTE).filter((t) => t > from && t < before);
        return { count: instants.length, last: instants.at(-1) };
      },
    };
    const caughtUp: Array<number | undefined> = [];
    observers.add({ started: (run) => void caughtUp.push(run.instant) });
    const report = job('Jobs.report', () => undefined, { trigger: calendar, options: policy({ missedRuns: 'runOnce', catchUpWindowMs: 5 * MINUTE }) });
    vacant(5 * MINUTE);
    known(0);
    clock.set(10 * MINUTE + 500);
    runner.catchUpAtStart([report], 10 * MINUTE - 100);
    for (let turn = 0; turn < 50 && !heard.some((line) => line.startsWith('own ended Jobs.report')); turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(heard).toContain('own started Jobs.report catchUp');
    expect(caughtUp).toEqual([9 * MINUTE]);
  });

  it('skips a tick at a time that is not a fire instant, and a second tick for an instant already run', async () => {
    const { clock, runner, heard, job } = setUp();
    const runs: number[] = [];
    const hole = job('Jobs.hole', () => runs.push(1), { trigger: everyMinute([10 * MINUTE]) });
    await runner.run(hole, { kind: 'tick' });
    expect(heard).toEqual([`own skipped Jobs.hole ${NOT_A_FIRE_INSTANT}`]);
    clock.advance(MINUTE);
    const twice = job('Jobs.twice', () => runs.push(2), { trigger: everyMinute() });
    await runner.run(twice, { kind: 'tick' });
    await runner.run(twice, { kind: 'tick' });
    expect(runs).toEqual([2]);
    expect(heard.at(-1)).toBe(`own skipped Jobs.twice ${DUPLICATE_TICK}`);
  });

  it('drops a tick that overlaps the run going on here (OVERLAP), and with overlap: replace stops that run and goes ahead', async () => {
    const { runner, heard, job, lease } = setUp();
    let release!: () => void;
    const slow = job('Jobs.slow', () => new Promise<void>((resolve) => (release = resolve)));
    const first = runner.run(slow, { kind: 'tick' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await runner.run(slow, { kind: 'tick' })).toBeUndefined();
    expect(heard.at(-1)).toBe(`own skipped Jobs.slow ${OVERLAP}`);
    release();
    await first;

    // overlap: 'replace': the running run's signal fires; a run that stops at it ends `replaced`, and the tick runs.
    let calls = 0;
    const replaceable = job('Jobs.replace', async () => {
      const signal = lease().signal;
      if (++calls === 1) await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      return calls;
    }, { options: policy({ overlap: 'replace' }) });
    const replaced = runner.run(replaceable, { kind: 'tick' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await runner.run(replaceable, { kind: 'tick' })).toBe(2);
    expect(await replaced).toBeUndefined();
    expect(heard).toContain('own ended Jobs.replace replaced');
  });

  it('runs a run now once it claimed its request, after the tick going on here; not claimed, nothing runs', async () => {
    const { runner, heard, job } = setUp();
    let release!: () => void;
    const order: string[] = [];
    const billing = job('Jobs.charge', () => {
      order.push('run');
      return order.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : undefined;
    });
    const tick = runner.run(billing, { kind: 'tick' });
    await new Promise((resolve) => setImmediate(resolve));
    const manual = { request: 'r-1', claim: async () => (order.push('claimed'), true) };
    const now = runner.run(billing, { kind: 'manual', manual });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['run']); // the run now waits for the tick's run
    release();
    await Promise.all([tick, now]);
    expect(order).toEqual(['run', 'claimed', 'run']);
    expect(heard).toContain('own started Jobs.charge manual r-1');
    const refused = { request: 'r-2', claim: async () => false };
    expect(await runner.run(billing, { kind: 'manual', manual: refused })).toBeUndefined();
    expect(order).toHaveLength(3);
  });

  it('drops a tick whose decision landed more than half a period after its instant (LATE_DECISION)', async () => {
    const { runner, heard, job, stall } = setUp();
    const late = job('Jobs.late', () => 'ran', { trigger: everyMinute() });
    stall(40_000); // decided 41 s after its instant: past half the minute
    expect(await runner.run(late, { kind: 'tick' })).toBeUndefined();
    expect(heard.at(-1)).toBe(`own skipped Jobs.late ${LATE_DECISION}`);
  });
});
