import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { systemClock } from '../../lib/core/clock';
import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import {
  checkHistory, newHistoryFile, Operator, readHistory, recordNemesis, resetConnections, startWorkloadNode,
  type EffectEvent, type NodeProcess, type SignalEvent, type StartEvent, type WorkloadJob,
} from '../harness';
import { eventually } from '../support/eventually';
import { ControlledPostgres } from '../support/postgres-control';
import { uniquePrefix } from '../support/test-cluster';

const SKEW_MS = 200;
/** A long run in hold mode: kept alive by refreshes, it must stop by its lease when they cannot land. */
const LONG_MS = 4_000;
const LONG: WorkloadJob = { semaphore: 'long', duration: LONG_MS, intervalMs: 250, runMs: 60_000, effectEveryMs: 50 };
/** Short runs in release mode, granted several times a second: tokens must keep growing across every fault. */
const OFTEN_MS = 2_000;
const OFTEN: WorkloadJob = { semaphore: 'often', duration: OFTEN_MS, intervalMs: 200, runMs: 10, effectEveryMs: 5, mode: 'release', lockAtLeastFor: '150ms' };

/** A long-running job an operator pauses: its holder writes its entry again only at half its permit (30 s). */
const EDITED_MS = 60_000;
const EDITED: WorkloadJob = { semaphore: 'edited', duration: EDITED_MS, intervalMs: 1_000, runMs: 120_000, effectEveryMs: 50 };
/** How often a node checks that its LISTEN connection still hears (PostgresBackend's listenCheckMs default). */
const LISTEN_CHECK_MS = 5_000;
/**
 * A deaf LISTEN connection is found by the next check (at most one period away) failing within its own deadline
 * (another period); the view is then read again. Two seconds more for that read on a loaded machine.
 */
const DEAF_BOUND_MS = 2 * LISTEN_CHECK_MS + 2_000;

/**
 * The fault harness on PostgreSQL: real node processes run `@ClusterSingleton` jobs on a server of the test's own,
 * which is crashed, frozen, or has a node's LISTEN connection ended, and the checker reads only the history. The
 * properties are the Hazelcast ones: at most one holder at every instant, tokens never back, no run on too little
 * validity, nothing runs while the store cannot be reached (past the lease it was granted), and edits reach the
 * holder within their bound.
 */
describe('PostgreSQL server faults under running jobs', () => {
  let server: ControlledPostgres;
  const nodes: NodeProcess[] = [];
  const closing: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    server = await ControlledPostgres.start();
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    await Promise.all(closing.splice(0).map((close) => close()));
  });
  afterAll(async () => {
    await server?.quit();
  });

  /** Two nodes running `jobs` on a fresh prefix; returns the history and its readers. */
  async function scene(label: string, jobs: WorkloadJob[], names = ['node-a', 'node-b']) {
    const historyFile = newHistoryFile(label);
    const settings = { historyFile, cluster: { postgresUrl: server.url }, mapPrefix: uniquePrefix(label), maxClockSkew: `${SKEW_MS}ms`, jobs };
    nodes.push(...(await Promise.all(names.map((name) => startWorkloadNode({ ...settings, name })))));
    const events = () => readHistory(historyFile);
    const starts = (semaphore: string) => events().filter((e): e is StartEvent => e.type === 'start' && e.semaphore === semaphore);
    return { historyFile, settings, events, starts };
  }

  /** The last event of a run (by its token) other than its start. */
  const lastOf = (semaphore: string, token: number, history: ReturnType<typeof readHistory>) =>
    history.filter((e) => 'semaphore' in e && e.semaphore === semaphore && 'token' in e && e.token === token && e.type !== 'start').at(-1);

  it('a crash of the server (SIGKILL) and its restart: the holder stops by its lease, tokens keep growing', async () => {
    const { historyFile, events, starts } = await scene('pg-crash', [LONG, OFTEN]);
    await eventually('the long job to run and the frequent one to be granted often', () => starts('long').length > 0 && starts('often').length >= 5, { timeoutMs: 20_000 });
    const before = starts('long')[0];

    const killed = recordNemesis(historyFile, 'kill postgres');
    await server.kill();
    await eventually('the holder to stop its run', () => lastOf('long', before.token, events())?.type === 'end', { timeoutMs: 2 * LONG_MS });
    const restarting = recordNemesis(historyFile, 'start postgres');
    await server.startAgain();
    await eventually('the long job to run again', () => starts('long').some((e) => e.at > restarting.at), { timeoutMs: 30_000, intervalMs: 100 });
    await eventually('the frequent job to run again', () => starts('often').filter((e) => e.at > restarting.at).length >= 3, { timeoutMs: 30_000, intervalMs: 100 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: OFTEN_MS / 5 });
    const lastOld = lastOf('long', before.token, history)!;
    const resumed = starts('long').find((e) => e.at > restarting.at)!;
    // Nothing ran while the store could not be reached past the lease the holder had: its last effect was valid.
    const effectsWhileDown = history.filter((e): e is EffectEvent => e.type === 'effect' && e.at > killed.at && e.at < restarting.at);
    process.stdout.write(`postgres crash: the holder's run ended ${lastOld.at - killed.at} ms after the kill (permit ${LONG_MS} ms), `
      + `${effectsWhileDown.length} effects while down, the last ${effectsWhileDown.length ? effectsWhileDown.at(-1)!.at - killed.at : '-'} ms after the kill; `
      + `jobs ran again ${resumed.at - restarting.at} ms after the restart began; ${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(lastOld.at - killed.at).toBeLessThanOrEqual(LONG_MS + 1_000);
    expect(effectsWhileDown.every((e) => e.at <= killed.at + LONG_MS)).toBe(true);
    // The holder may take its own permit up again (same token) if it outlived the outage; anyone else, a later one.
    expect(resumed.node === before.node ? resumed.token >= before.token : resumed.token > before.token).toBe(true);
  });

  it('a server frozen (SIGSTOP) past the lease: the holder stops by its lease, nobody else runs until it answers', async () => {
    const { historyFile, events, starts } = await scene('pg-freeze', [LONG, OFTEN]);
    await eventually('the long job to run', () => starts('long').length > 0 && starts('often').length >= 5, { timeoutMs: 20_000 });
    const before = starts('long')[0];

    const frozen = recordNemesis(historyFile, 'freeze postgres');
    await server.freeze();
    await eventually('the holder to stop its run', () => lastOf('long', before.token, events())?.type === 'end', { timeoutMs: 2 * LONG_MS });
    // Frozen for a permit and a half: every permit granted before lapsed meanwhile.
    await eventually('the freeze to outlast the permit', () => Date.now() >= frozen.at + 1.5 * LONG_MS, { timeoutMs: 2 * LONG_MS });
    const resuming = recordNemesis(historyFile, 'resume postgres');
    await server.resume();
    await eventually('the long job to run again', () => starts('long').some((e) => e.at > resuming.at), { timeoutMs: 30_000, intervalMs: 100 });
    await eventually('the frequent job to run again', () => starts('often').filter((e) => e.at > resuming.at).length >= 3, { timeoutMs: 30_000, intervalMs: 100 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: OFTEN_MS / 5 });
    const lastOld = lastOf('long', before.token, history)!;
    const startsWhileFrozen = history.filter((e) => e.type === 'start' && e.at > frozen.at + 500 && e.at < resuming.at);
    process.stdout.write(`postgres frozen ${resuming.at - frozen.at} ms: the holder's run ended ${lastOld.at - frozen.at} ms after the freeze `
      + `(permit ${LONG_MS} ms), ${startsWhileFrozen.length} starts while frozen; ${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(lastOld.at - frozen.at).toBeLessThanOrEqual(LONG_MS + 1_000);
    // A run may begin on a grant that landed just before the freeze (within its start margin); none later.
    expect(startsWhileFrozen).toEqual([]);
  });

  it('a holder frozen (SIGSTOP) past its permit: another node takes over, and the resumed holder writes nothing after', async () => {
    const { historyFile, events, starts } = await scene('pg-paused-holder', [LONG]);
    await eventually('the long job to run', () => starts('long').length > 0, { timeoutMs: 20_000 });
    const before = starts('long')[0];
    const holder = nodes.find((n) => n.name === before.node)!;

    holder.freeze();
    const frozenAt = Date.now();
    const takeover = await eventually('another node to take over', () => starts('long').find((e) => e.node !== holder.name), { timeoutMs: 4 * LONG_MS });
    holder.resume();
    const resumedAt = Date.now();
    await eventually('the resumed holder to end its run', () => lastOf('long', before.token, events())?.type === 'end', { timeoutMs: LONG_MS });
    await eventually('the new holder to keep working', () => events().filter((e) => e.type === 'effect' && e.node === takeover.node && e.at > resumedAt + 500).length >= 3, { timeoutMs: 10_000 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    recordNemesis(historyFile, 'end');

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: LONG_MS / 5 });
    const staleEffects = history.filter((e) => e.type === 'effect' && e.node === holder.name && e.at > takeover.at);
    process.stdout.write(`postgres, paused holder: ${takeover.node} took over ${takeover.at - frozenAt} ms after SIGSTOP (permit ${LONG_MS} ms); `
      + `effects by the resumed holder after the takeover: ${staleEffects.length}; ${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(takeover.token).toBeGreaterThan(before.token);
    expect(staleEffects).toEqual([]);
  });

  /** The node `holder` pausing job `edited` while its LISTEN connection suffers `fault`; returns when its job was told. */
  async function pauseUnheard(label: string, fault: (listener: number) => Promise<void> | void) {
    const { historyFile, settings, events, starts } = await scene(label, [EDITED], ['holder']);
    await eventually('the holder to run the job', () => starts('edited').length > 0, { timeoutMs: 20_000 });
    const store = new PermitRecordStore(new PostgresBackend({ connectionString: server.url, mapPrefix: settings.mapPrefix }));
    await store.connect({ clock: systemClock });
    closing.push(() => store.close());
    const operator = new Operator(historyFile, new SemaphoreAdmin(store, systemClock));
    const [listener] = await server.backends('holder', "query ilike 'LISTEN %'");
    expect(listener).toBeDefined();
    recordNemesis(historyFile, label, { node: 'holder', backend: listener });
    await fault(listener);
    const paused = await operator.edit('pause', 'edited');
    expect(paused.ok).toBe(true);
    const told = await eventually('the holder\'s running job to be told', () => events().find((e): e is SignalEvent =>
      e.type === 'signal' && e.node === 'holder' && e.semaphore === 'edited' && e.at >= paused.startedAt), { timeoutMs: EDITED_MS, intervalMs: 20 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    const { violations } = checkHistory(events(), { permits: 1, startMarginMs: EDITED_MS / 5 });
    expect(violations).toEqual([]);
    return told.at - paused.startedAt;
  }

  it('the holder\'s LISTEN connection ended as an operator pauses its job: the running job is told at once', async () => {
    const toldAfter = await pauseUnheard('pg-listen-ended', async (listener) => {
      expect(await server.terminate(listener)).toBe(true);
    });
    process.stdout.write(`postgres, LISTEN connection ended: the paused job told ${toldAfter} ms after the pause\n`);
    // The node listens again at once and reads its view again (it may have missed changes): well within the check.
    expect(toldAfter).toBeLessThanOrEqual(LISTEN_CHECK_MS);
  });

  it('the holder\'s LISTEN connection deaf (its backend SIGSTOPped) as an operator pauses its job: told within two checks', async () => {
    let frozen: number | undefined;
    try {
      const toldAfter = await pauseUnheard('pg-listen-deaf', (listener) => {
        frozen = listener;
        process.kill(listener, 'SIGSTOP');
      });
      process.stdout.write(`postgres, LISTEN connection deaf: the paused job told ${toldAfter} ms after the pause (bound ${DEAF_BOUND_MS} ms; `
        + `the holder's own next write of the entry was due ${EDITED_MS / 2} ms after its last)\n`);
      expect(toldAfter).toBeLessThanOrEqual(DEAF_BOUND_MS);
    } finally {
      if (frozen !== undefined) process.kill(frozen, 'SIGCONT');
    }
  });

  it('a node\'s connections reset again and again (ss -K) as an operator pauses its job: one holder, the pause heard, jobs go on', async () => {
    const { historyFile, settings, events, starts } = await scene('pg-reset', [LONG, OFTEN, EDITED]);
    await eventually('every job to run', () => ['long', 'often', 'edited'].every((s) => starts(s).length > 0), { timeoutMs: 20_000 });
    const holder = nodes.find((n) => n.name === starts('edited')[0].node)!;
    const store = new PermitRecordStore(new PostgresBackend({ connectionString: server.url, mapPrefix: settings.mapPrefix }));
    await store.connect({ clock: systemClock });
    closing.push(() => store.close());
    const operator = new Operator(historyFile, new SemaphoreAdmin(store, systemClock));

    // Every 250 ms for 4 s, every connection the holder has to the server is destroyed: its pool's and its LISTEN one;
    // while the pause is written, every 10 ms, so its notification finds no LISTEN connection to reach.
    const resetting = recordNemesis(historyFile, 'reset connections', { node: holder.name });
    let resets = 0;
    let paused: Awaited<ReturnType<Operator['edit']>> | undefined;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (let round = 0; round < 16; round++) {
      resets += resetConnections(holder.pid, server.port);
      if (round === 6) {
        const editing = operator.edit('pause', 'edited').then((done) => (paused = done));
        while (!paused) {
          resets += resetConnections(holder.pid, server.port);
          await Promise.race([editing, pause(10)]);
        }
      }
      await pause(250);
    }
    const calm = recordNemesis(historyFile, 'connections left alone');
    expect(paused?.ok).toBe(true);
    const told = await eventually('the holder\'s running job to be told of the pause', () => events().find((e): e is SignalEvent =>
      e.type === 'signal' && e.node === holder.name && e.semaphore === 'edited' && e.at >= paused!.startedAt), { timeoutMs: EDITED_MS, intervalMs: 20 });
    await eventually('the other jobs to run on after the resets', () => starts('often').filter((e) => e.at > calm.at).length >= 3, { timeoutMs: 30_000, intervalMs: 100 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: OFTEN_MS / 5 });
    const oftenDuring = starts('often').filter((e) => e.at > resetting.at && e.at < calm.at).length;
    process.stdout.write(`postgres, connections reset: ${resets} connections of ${holder.name} destroyed in 16 rounds over ${calm.at - resetting.at} ms; `
      + `the paused job told ${told.at - paused!.startedAt} ms after the pause; ${oftenDuring} grants of the frequent job meanwhile; `
      + `${stats.runs} runs, max overlap ${stats.maxOverlapMs} ms, ${violations.length} violations\n`);
    expect(resets).toBeGreaterThanOrEqual(16);
    expect(violations).toEqual([]);
    // A reset LISTEN connection is replaced at once, and the view read again: well within one check of the feed.
    expect(told.at - paused!.startedAt).toBeLessThanOrEqual(LISTEN_CHECK_MS);
  });
});
