import { systemClock } from '../../lib/core/clock';
import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import {
  checkHistory, newHistoryFile, Operator, readHistory, recordNemesis, resetConnections, startWorkloadNode,
  type EffectEvent, type NodeProcess, type SignalEvent, type StartEvent, type WorkloadJob,
} from '../harness';
import { eventually } from '../support/eventually';
import { SERVER_KINDS, type FaultedServer } from '../support/faulted-servers';
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

/** The last event of a run (by its token) other than its start. */
const lastOf = (semaphore: string, token: number, history: ReturnType<typeof readHistory>) =>
  history.filter((e) => 'semaphore' in e && e.semaphore === semaphore && 'token' in e && e.token === token && e.type !== 'start').at(-1);

/**
 * The fault harness on each server the library runs on besides Hazelcast (PostgreSQL, Redis with and without its
 * append-only file), written once: real node processes run `@ClusterSingleton` jobs on a server of the test's own,
 * which is crashed, frozen, has a holder frozen under it, a node's change feed ended or made deaf, or a node's
 * connections reset again and again; the checker reads only the history. The properties are every store's: at most
 * one holder at every instant, tokens never back, no run on too little validity, nothing runs while the store cannot
 * be reached (past the lease it was granted), and edits reach the holder within their bound. What differs by server
 * is said by its {@link SERVER_KINDS} entry (whether a restart is a recovery, which feed faults it has).
 */
describe.each(SERVER_KINDS)('$name server faults under running jobs', (kind) => {
  let server: FaultedServer;
  const nodes: NodeProcess[] = [];
  const closing: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    server = await kind.start();
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    await Promise.all(closing.splice(0).map((close) => close()));
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Node processes running `jobs` on a fresh prefix; returns the history and its readers. */
  async function scene(label: string, jobs: WorkloadJob[], names = ['node-a', 'node-b']) {
    const historyFile = newHistoryFile(`${kind.short}-${label}`);
    const settings = { historyFile, cluster: server.target, mapPrefix: uniquePrefix(`${kind.short}-${label}`), maxClockSkew: `${SKEW_MS}ms`, jobs };
    await server.prepare(settings.mapPrefix);
    nodes.push(...(await Promise.all(names.map((name) => startWorkloadNode({ ...settings, name })))));
    const events = () => readHistory(historyFile);
    const starts = (semaphore: string) => events().filter((e): e is StartEvent => e.type === 'start' && e.semaphore === semaphore);
    return { historyFile, settings, events, starts };
  }

  /** An operator on the scene's prefix, writing what it does to the history. */
  async function operatorOf(historyFile: string, mapPrefix: string): Promise<Operator> {
    const store = new PermitRecordStore(server.backend(mapPrefix));
    await store.connect({ clock: systemClock });
    closing.push(() => store.close());
    return new Operator(historyFile, new SemaphoreAdmin(store, systemClock));
  }

  it('a crash of the server (SIGKILL) and its restart: the holder stops by its lease, tokens keep growing, one holder', async () => {
    const { historyFile, events, starts } = await scene('crash', [LONG, OFTEN]);
    await eventually('the long job to run and the frequent one to be granted often', () => starts('long').length > 0 && starts('often').length >= 5, { timeoutMs: 20_000 });
    const before = starts('long')[0];

    const killed = recordNemesis(historyFile, `kill ${kind.short}`);
    await server.kill();
    await eventually('the holder to stop its run', () => lastOf('long', before.token, events())?.type === 'end', { timeoutMs: 2 * LONG_MS });
    const restarting = recordNemesis(historyFile, `start ${kind.short}`);
    await server.restart();
    await eventually('the long job to run again', () => starts('long').some((e) => e.at > restarting.at), { timeoutMs: 30_000, intervalMs: 100 });
    await eventually('the frequent job to run again', () => starts('often').filter((e) => e.at > restarting.at).length >= 3, { timeoutMs: 30_000, intervalMs: 100 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: OFTEN_MS / 5 });
    const lastOld = lastOf('long', before.token, history)!;
    const resumed = starts('long').find((e) => e.at > restarting.at)!;
    // Nothing ran while the store could not be reached past the lease the holder had: its last effect was valid.
    const effectsWhileDown = history.filter((e): e is EffectEvent => e.type === 'effect' && e.at > killed.at && e.at < restarting.at);
    process.stdout.write(`${kind.name} crash: the holder's run ended ${lastOld.at - killed.at} ms after the kill (permit ${LONG_MS} ms), `
      + `${effectsWhileDown.length} effects while down; the long job ran again ${resumed.at - restarting.at} ms after the restart began `
      + `(token ${before.token} → ${resumed.token}); ${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(lastOld.at - killed.at).toBeLessThanOrEqual(LONG_MS + 1_000);
    expect(effectsWhileDown.every((e) => e.at <= killed.at + LONG_MS)).toBe(true);
    if (kind.restartIsRecovery) {
      // A restart that may have dropped acknowledged writes (an fsync every second, or none) is a recovery, not a
      // fresh start: counters start again above the time of the loss, and the permit is granted again only once
      // every permit granted before could have lapsed.
      expect(resumed.token).toBeGreaterThan(before.token);
      expect(resumed.at - restarting.at).toBeGreaterThanOrEqual(LONG_MS);
    } else {
      // Nothing acknowledged was lost: the holder may take its own permit up again (same token) if it outlived the
      // outage; anyone else, a later one.
      expect(resumed.node === before.node ? resumed.token >= before.token : resumed.token > before.token).toBe(true);
    }
  });

  it('a server frozen (SIGSTOP) past the lease: the holder stops by its lease, nobody else runs until it answers', async () => {
    const { historyFile, events, starts } = await scene('freeze', [LONG, OFTEN]);
    await eventually('the long job to run', () => starts('long').length > 0 && starts('often').length >= 5, { timeoutMs: 20_000 });
    const before = starts('long')[0];

    const frozen = recordNemesis(historyFile, `freeze ${kind.short}`);
    await server.freeze();
    await eventually('the holder to stop its run', () => lastOf('long', before.token, events())?.type === 'end', { timeoutMs: 2 * LONG_MS });
    // Frozen for a permit and a half: every permit granted before lapsed meanwhile.
    await eventually('the freeze to outlast the permit', () => Date.now() >= frozen.at + 1.5 * LONG_MS, { timeoutMs: 2 * LONG_MS });
    const resuming = recordNemesis(historyFile, `resume ${kind.short}`);
    await server.resume();
    await eventually('the long job to run again', () => starts('long').some((e) => e.at > resuming.at), { timeoutMs: 30_000, intervalMs: 100 });
    await eventually('the frequent job to run again', () => starts('often').filter((e) => e.at > resuming.at).length >= 3, { timeoutMs: 30_000, intervalMs: 100 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: OFTEN_MS / 5 });
    const lastOld = lastOf('long', before.token, history)!;
    const startsWhileFrozen = history.filter((e) => e.type === 'start' && e.at > frozen.at + 500 && e.at < resuming.at);
    // What the holder knew: the lease its last effect ran under, and why its run stopped (a late end under an early
    // lease is a stalled process, not a lease that vouched too long).
    const ofOld = history.filter((e) => 'token' in e && e.token === before.token && e.semaphore === 'long');
    const lastEffect = ofOld.filter((e) => e.type === 'effect').at(-1) as { at: number; validUntil?: number } | undefined;
    const why = ofOld.find((e) => e.type === 'abort' || e.type === 'signal') as { reason?: string } | undefined;
    process.stdout.write(`${kind.name} frozen ${resuming.at - frozen.at} ms: the holder's run ended ${lastOld.at - frozen.at} ms after the freeze `
      + `(permit ${LONG_MS} ms; its last effect ${lastEffect ? lastEffect.at - frozen.at : '-'} ms after, under a lease valid until `
      + `${lastEffect?.validUntil === undefined ? '-' : lastEffect.validUntil - frozen.at} ms after; stopped by: ${why?.reason ?? '-'}), `
      + `${startsWhileFrozen.length} starts while frozen; ${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(lastOld.at - frozen.at).toBeLessThanOrEqual(LONG_MS + 1_000);
    // A run may begin on a grant that landed just before the freeze (within its start margin); none later.
    expect(startsWhileFrozen).toEqual([]);
  });

  it('a holder frozen (SIGSTOP) past its permit: another node takes over, and the resumed holder writes nothing after', async () => {
    const { historyFile, events, starts } = await scene('paused-holder', [LONG]);
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
    process.stdout.write(`${kind.name}, paused holder: ${takeover.node} took over ${takeover.at - frozenAt} ms after SIGSTOP (permit ${LONG_MS} ms); `
      + `effects by the resumed holder after the takeover: ${staleEffects.length}; ${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(takeover.token).toBeGreaterThan(before.token);
    expect(staleEffects).toEqual([]);
  });

  /** The node `holder` running job `edited` while its change feed suffers `fault`, then paused; returns when its job was told. */
  async function pauseUnheard(label: string, fault: () => Promise<unknown>) {
    const { historyFile, settings, events, starts } = await scene(label, [EDITED], ['holder']);
    await eventually('the holder to run the job', () => starts('edited').length > 0, { timeoutMs: 20_000 });
    const operator = await operatorOf(historyFile, settings.mapPrefix);
    await fault();
    recordNemesis(historyFile, label, { node: 'holder' });
    const paused = await operator.edit('pause', 'edited');
    expect(paused.ok).toBe(true);
    const told = await eventually('the holder\'s running job to be told', () => events().find((e): e is SignalEvent =>
      e.type === 'signal' && e.node === 'holder' && e.semaphore === 'edited' && e.at >= paused.startedAt), { timeoutMs: EDITED_MS, intervalMs: 20 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    const { violations } = checkHistory(events(), { permits: 1, startMarginMs: EDITED_MS / 5 });
    expect(violations).toEqual([]);
    return told.at - paused.startedAt;
  }

  it('the holder\'s change feed ended as an operator pauses its job: the running job is told within a check', async () => {
    const toldAfter = await pauseUnheard('feed-ended', () => server.endFeed('holder'));
    process.stdout.write(`${kind.name}, feed ended: the paused job told ${toldAfter} ms after the pause\n`);
    // The node listens again at once and reads its view again (it may have missed changes): well within a check.
    expect(toldAfter).toBeLessThanOrEqual(kind.feedCheckMs);
  });

  // A feed that stays open but hears nothing: only where the server can make one (a PostgreSQL backend SIGSTOPped).
  if (kind.deafensFeeds) {
    it('the holder\'s change feed deaf (its connection open, nothing heard) as an operator pauses its job: told within two checks', async () => {
      // The deaf feed is found by the next check (at most one period away) failing within its own deadline (another
      // period); the view is then read again. Two seconds more for that read on a loaded machine.
      const deafBoundMs = 2 * kind.feedCheckMs + 2_000;
      let undo: (() => void) | undefined;
      try {
        const toldAfter = await pauseUnheard('feed-deaf', async () => (undo = await server.deafenFeed!('holder')));
        process.stdout.write(`${kind.name}, feed deaf: the paused job told ${toldAfter} ms after the pause (bound ${deafBoundMs} ms; `
          + `the holder's own next write of the entry was due ${EDITED_MS / 2} ms after its last)\n`);
        expect(toldAfter).toBeLessThanOrEqual(deafBoundMs);
      } finally {
        undo?.();
      }
    });
  }

  it('a node\'s connections reset again and again (ss -K) as an operator pauses its job: one holder, the pause heard, jobs go on', async () => {
    const { historyFile, settings, events, starts } = await scene('reset', [LONG, OFTEN, EDITED]);
    await eventually('every job to run', () => ['long', 'often', 'edited'].every((s) => starts(s).length > 0), { timeoutMs: 20_000 });
    const holder = nodes.find((n) => n.name === starts('edited')[0].node)!;
    const operator = await operatorOf(historyFile, settings.mapPrefix);

    // Every 250 ms for 4 s, every connection the holder has to the server is destroyed (its commands' and its feed's);
    // while the pause is written, every 10 ms, so its notification finds no feed to reach.
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
    process.stdout.write(`${kind.name}, connections reset: ${resets} connections of ${holder.name} destroyed in 16 rounds over ${calm.at - resetting.at} ms; `
      + `the paused job told ${told.at - paused!.startedAt} ms after the pause; ${oftenDuring} grants of the frequent job meanwhile; `
      + `${stats.runs} runs, max overlap ${stats.maxOverlapMs} ms, ${violations.length} violations\n`);
    expect(resets).toBeGreaterThanOrEqual(16);
    expect(violations).toEqual([]);
    // A reset feed is replaced at once, and the view read again: well within one check of the feed.
    expect(told.at - paused!.startedAt).toBeLessThanOrEqual(kind.feedCheckMs);
  });
});
