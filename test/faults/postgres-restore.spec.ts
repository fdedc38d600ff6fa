import {
  checkHistory, newHistoryFile, readHistory, recordNemesis, startWorkloadNode,
  type EffectEvent, type NodeProcess, type StartEvent, type WorkloadJob,
} from '../harness';
import { eventually } from '../support/eventually';
import { ControlledPostgres } from '../support/postgres-control';
import { uniquePrefix } from '../support/test-cluster';

const SKEW_MS = 200;
/**
 * A long run in hold mode. Its holder writes its entry again at half the permit, so when the holder is frozen its
 * permit still has at least half of it left: long enough to outlive the restore and a new node's start.
 */
const LEASE_MS = 10_000;
const HELD: WorkloadJob = { semaphore: 'held', duration: LEASE_MS, intervalMs: 250, runMs: 120_000, effectEveryMs: 50 };

/**
 * A database that comes back older than what it acknowledged: restored from a backup into a new server, or a replica
 * promoted after the server died with commits it had not sent. The backup (or the replica's last commit) shows the
 * semaphore free; after it, a node was granted it and still runs, frozen while the database is replaced. A node that
 * starts on the older database knows nothing of that grant: it must find the database is not the one the state was
 * written in and wait out every permit of it before running the job, or two nodes run it at once. The checker reads
 * only the history.
 */
describe('PostgreSQL restored or failed over under a running job', () => {
  let server: ControlledPostgres;
  const nodes: NodeProcess[] = [];
  beforeEach(async () => {
    server = await ControlledPostgres.start();
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    await server?.quit();
  });

  /** Runs the scene: `save` keeps the database's state while the job is free, `replace` brings that state back. */
  async function olderStateUnderHolder(label: string, save: () => Promise<void>, replace: () => Promise<void>) {
    const historyFile = newHistoryFile(label);
    const settings = { historyFile, cluster: { postgresUrl: server.url }, mapPrefix: uniquePrefix(label), maxClockSkew: `${SKEW_MS}ms`, jobs: [HELD] };
    const start = async (name: string) => {
      const node = await startWorkloadNode({ ...settings, name });
      nodes.push(node);
      return node;
    };
    const events = () => readHistory(historyFile);
    const starts = () => events().filter((e): e is StartEvent => e.type === 'start' && e.semaphore === 'held');

    // The semaphore's entry exists and is free (its first holder left gracefully, releasing it) when the state is saved.
    const first = await start('node-0');
    await eventually('the first node to run the job', () => starts().length > 0, { timeoutMs: 20_000 });
    await first.terminate();
    recordNemesis(historyFile, `save (${label})`);
    await save();

    // Granted after the save: the database will forget it.
    await Promise.all(['node-a', 'node-b'].map(start));
    const granted = await eventually('a node to be granted the job after the save', () => starts().find((e) => e.node !== 'node-0'), { timeoutMs: 20_000 });
    const holder = nodes.find((n) => n.name === granted.node)!;
    const other = nodes.find((n) => n.name !== granted.node && n.name !== 'node-0')!;
    holder.freeze();
    await other.kill();
    const replacing = recordNemesis(historyFile, `replace (${label})`);
    await replace();
    const replaced = recordNemesis(historyFile, `replaced (${label})`);

    // A node that never saw the grant starts on the older state; the frozen holder wakes while its permit is valid.
    await start('node-c');
    const newcomerUp = Date.now();
    await eventually('node-c to run the job, or a second to pass', () => starts().some((e) => e.node === 'node-c') || Date.now() > replaced.at + 1_000, { timeoutMs: 20_000, intervalMs: 50 });
    holder.resume();
    const resumedAt = Date.now();
    // After the recovery wait the job runs again: on node-c, or on the woken holder if it wins the new grant.
    const again = await eventually('the job to run again', () => starts().find((e) => e.at > replaced.at), { timeoutMs: 3 * LEASE_MS, intervalMs: 100 });
    await eventually('it to work a while', () => events().filter((e) => e.type === 'effect' && e.token === again.token).length >= 5, { timeoutMs: 10_000 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: LEASE_MS / 5 });
    const holderEffects = history.filter((e): e is EffectEvent => e.type === 'effect' && e.node === holder.name && e.at > resumedAt);
    // How long the holder's permit was valid by what it recorded before it was frozen.
    const heldUntil = Math.max(...history.filter((e): e is StartEvent | EffectEvent => (e.type === 'start' || e.type === 'effect')
      && e.node === holder.name && e.token === granted.token && e.at < replacing.at).map((e) => e.validUntil ?? 0));
    const tokens = starts().map((e) => e.token);
    process.stdout.write(`postgres ${label}: ${holder.name} (granted after the save, frozen meanwhile) woke ${resumedAt - granted.at} ms `
      + `into its ${LEASE_MS} ms permit, valid ${heldUntil - newcomerUp} ms past node-c's start, and made ${holderEffects.length} effects `
      + `after it woke; the job first ran again on ${again.node} (node-c: new on the older state) `
      + `${again.at - replacing.at} ms after the database was replaced (recovery wait ${LEASE_MS} ms + twice the skew bound); `
      + `${stats.runs} runs, tokens ${tokens.join(' < ')}, max overlap ${stats.maxOverlapMs} ms, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    // The frozen holder's permit was still valid when node-c came up: what kept the job single is node-c waiting.
    expect(heldUntil).toBeGreaterThan(newcomerUp);
    expect(again.token).toBeGreaterThan(granted.token);
    // The loss is dated no earlier than the database came back: nothing runs again before a whole permit after that.
    expect(again.at - replacing.at).toBeGreaterThanOrEqual(LEASE_MS);
    expect(new Set(tokens).size).toBe(tokens.length);
  }

  it('a restore of an older dump into a new server: nothing runs twice, no token is handed out twice', async () => {
    await olderStateUnderHolder('pg-restore', () => server.dump(), () => server.restoreFresh());
  });

  it('a replica promoted after the server died with commits it had not sent: nothing runs twice, no token twice', async () => {
    await olderStateUnderHolder('pg-failover', () => server.startStandby().then(() => server.stopStandby()), () => server.failover());
  });
});
