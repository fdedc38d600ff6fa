import { Pool } from 'pg';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { SEMAPHORE_KEYS_MAP, SEMAPHORE_MAP } from '../../lib/permits/permit-record.store';
import {
  checkHistory, newHistoryFile, readHistory, recordNemesis, startWorkloadNode,
  type EffectEvent, type HistoryEvent, type NodeProcess, type StartEvent, type WorkloadJob,
} from '../harness';
import { TcpProxy } from '../harness/tcp-proxy';
import { eventually } from '../support/eventually';
import { ControlledPostgres } from '../support/postgres-control';
import { ControlledRedis } from '../support/redis-control';
import { uniquePrefix } from '../support/test-cluster';

const SKEW_MS = 200;
/**
 * The permit: long enough that a node started right after the removal is up while the cut-off holder's lease still
 * vouches (a node process boots in 1–3 s on the loaded 2-core machine), so a grant at once would overlap it.
 */
const DURATION_MS = 10_000;
/** A long run in hold mode, kept alive by refreshes at a third of what is left of its permit. */
const JOB: WorkloadJob = { semaphore: 'billing', duration: DURATION_MS, intervalMs: 250, runMs: 120_000, effectEveryMs: 50 };
/**
 * A job whose holder can hear: a long permit, so the holder's own next write of its entry (a third of what is left of
 * it, 20 s) is far; what tells it sooner is the store finding the removal at any node's next call, at the latest the
 * feed's check of itself every `listenCheckMs`.
 */
const HEARD_MS = 60_000;
const HEARD: WorkloadJob = { ...JOB, duration: HEARD_MS, runMs: 240_000 };
/** The backends' listenCheckMs default: how often each node's feed checks itself (on Redis, by a script). */
const LISTEN_CHECK_MS = 5_000;
/** A removal is found by the next check of any node (at most a period away); a period more for its event, under load. */
const TOLD_BOUND_MS = 2 * LISTEN_CHECK_MS;

/** How an outside client removes the library's records, and what the store says to it. */
interface Removal {
  readonly label: string;
  /** Removes what it says; resolves to the error the store answered with, or `undefined` when it removed them. */
  readonly run: () => Promise<Error | undefined>;
}

/** The store of one describe: its server, a proxy in front of it (to cut the holder off) and the removals to try. */
interface Store {
  readonly target: () => { postgresUrl: string } | { redisUrl: string };
  /** Declares a prefix new (Redis: else its first use is a loss); nothing on PostgreSQL, whose new schema is new. */
  readonly fresh: (mapPrefix: string) => Promise<void>;
  readonly removals: (mapPrefix: string) => Removal[];
  /** How many records the prefix's semaphores and their existence notes have (to show a refused removal removed nothing). */
  readonly count: (mapPrefix: string) => Promise<number>;
}

/** The maps that say who holds a semaphore and that it ever existed. */
const LEASE_MAPS = [SEMAPHORE_MAP, SEMAPHORE_KEYS_MAP];

/** The removals each store is tried with, by index into {@link Store.removals}. */
const REMOVALS = ['every record', 'the whole store', 'one record'] as const;
const removalIndex = (removal: (typeof REMOVALS)[number]) => REMOVALS.indexOf(removal);
const short = { 'every record': 'all', 'the whole store': 'store', 'one record': 'one' } as const;

const runOf = (history: HistoryEvent[], token: number) => history.filter((e) => 'token' in e && e.token === token && e.type !== 'start' && e.type !== 'effect');

/**
 * Issue 47: every record of the library removed by an outside client (an operator "resetting the scheduler", a cleanup
 * script, a FLUSHDB of the wrong database) while the holder runs. Before, nothing left in the store said the semaphore
 * had ever existed: a node started at once was granted it with no recovery wait while the cut-off holder still ran
 * under its lease (2.8–4.0 s of two holders here, on both), and a holder on Redis that could hear was told only at its
 * own next write (34.8 s with a 60 s permit). Now PostgreSQL refuses the removal (guard triggers), and Redis finds it at the next
 * call of any node, marks what went lost (or, for a FLUSHDB, counts the whole store lost) and tells it: a new node
 * waits out the holder's permit, and a holder that can hear is told.
 */
function describeStore(name: string, setup: () => Promise<{ store: Store; proxy: TcpProxy; stop: () => Promise<void> }>) {
  describe(`every record of the library removed from outside, on ${name}`, () => {
    let store: Store;
    let proxy: TcpProxy;
    let stop: () => Promise<void>;
    const nodes: NodeProcess[] = [];
    beforeAll(async () => {
      ({ store, proxy, stop } = await setup());
    });
    afterEach(async () => {
      proxy.heal();
      await Promise.all(nodes.splice(0).map((n) => n.kill()));
    });
    afterAll(async () => {
      await proxy?.close();
      await stop?.();
    });

    async function scene(label: string, job = JOB) {
      const historyFile = newHistoryFile(label);
      const mapPrefix = uniquePrefix(label);
      await store.fresh(mapPrefix);
      const settings = { historyFile, cluster: store.target(), mapPrefix, maxClockSkew: `${SKEW_MS}ms`, jobs: [job] };
      const events = () => readHistory(historyFile);
      const starts = (node?: string) => events().filter((e): e is StartEvent => e.type === 'start' && (!node || e.node === node));
      const holder = await startWorkloadNode({ ...settings, name: 'holder' });
      nodes.push(holder);
      const first = await eventually('the holder to run the job', () => starts('holder')[0], { timeoutMs: 30_000 });
      // Past its first refresh, so its lease is one it renewed, as in a long-running job.
      await eventually('the holder\'s run to go on a while', () => Date.now() >= first.at + DURATION_MS / 2, { timeoutMs: DURATION_MS });
      return { historyFile, settings, mapPrefix, events, starts, holder, first };
    }

    for (const removal of REMOVALS) {
      it(`${removal} removed while the holder is cut off, a new node started at once: nobody runs it until the holder's lease lapsed`, async () => {
        const { historyFile, settings, mapPrefix, events, starts, holder, first } = await scene(`removal-cut-${name.slice(0, 5)}-${short[removal]}`);
        const remove = store.removals(mapPrefix)[removalIndex(removal)];
        // Cut right after one of the holder's refreshes, so most of a permit is left to vouch for it: a newcomer's
        // boot on a loaded machine fits in it (cut just before a refresh, only a third would be left).
        await eventually('a refresh of the holder\'s lease', () => {
          const last = events().filter((e): e is EffectEvent => e.type === 'effect' && e.node === 'holder' && e.validUntil !== undefined).at(-1);
          return last !== undefined && last.validUntil! - Date.now() >= 0.8 * DURATION_MS;
        }, { timeoutMs: DURATION_MS, intervalMs: 20 });
        proxy.blackhole({ pid: holder.pid });
        recordNemesis(historyFile, 'blackhole', 'holder');
        const removed = recordNemesis(historyFile, 'remove', `${remove.label}, by an outside client`);
        const refused = await remove.run();
        // A node that never saw the store starts at once (a deploy, a scale-up); its job defines billing if absent.
        nodes.push(await startWorkloadNode({ ...settings, name: 'newcomer' }));
        const newcomerUp = Date.now();
        const heldUntil = Math.max(...events().filter((e): e is StartEvent => (e.type === 'start' || e.type === 'effect') && e.node === 'holder'
          && e.at <= removed.at && (e as StartEvent).validUntil !== undefined).map((e) => e.validUntil));
        const taken = await eventually('the newcomer to run the job', () => starts('newcomer')[0], { timeoutMs: 4 * DURATION_MS, intervalMs: 50 });
        // Cut off until its lease lapsed: a holder that cannot hear runs on under it, whoever else runs meanwhile.
        await eventually('the holder\'s lease to lapse', () => Date.now() > heldUntil + 500, { timeoutMs: 2 * DURATION_MS });
        proxy.heal({ pid: holder.pid });
        recordNemesis(historyFile, 'heal', 'holder');
        await eventually('the newcomer to work a while', () => events().filter((e) => e.type === 'effect' && e.token === taken.token).length >= 5, { timeoutMs: 10_000 });
        await Promise.all(nodes.splice(0).map((n) => n.kill()));
        recordNemesis(historyFile, 'end');

        const history = events();
        const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: DURATION_MS / 5 });
        const holderLast = history.filter((e) => e.node === 'holder' && 'token' in e && e.token === first.token).at(-1)!;
        process.stdout.write(`${name}, ${remove.label} with the holder cut off: ${refused ? `refused (${refused.message.split('\n')[0]})` : 'removed'}; `
          + `the newcomer was up ${newcomerUp - removed.at} ms after the removal, while the holder's lease vouched until +${heldUntil - removed.at} ms; `
          + `its last event at +${holderLast.at - removed.at} ms (${holderLast.type}); the newcomer ran the job at +${taken.at - removed.at} ms, `
          + `token ${first.token} → ${taken.token}; ${stats.runs} runs, max overlap ${stats.maxOverlapMs} ms, ${violations.length} violations\n`);
        expect(newcomerUp).toBeLessThan(heldUntil); // else this run proves nothing: make DURATION_MS longer
        expect(violations).toEqual([]);
        expect(taken.at).toBeGreaterThanOrEqual(heldUntil);
        expect(taken.token).toBeGreaterThan(first.token);
      });
    }

    for (const removal of REMOVALS) {
      it(`${removal} removed while the holder can hear: the holder is told within a check of the feed, or the removal is refused and its run goes on`, async () => {
        const { historyFile, mapPrefix, events, first } = await scene(`removal-heard-${name.slice(0, 5)}-${short[removal]}`, HEARD);
        const before = await store.count(mapPrefix);
        const remove = store.removals(mapPrefix)[removalIndex(removal)];
        const removed = recordNemesis(historyFile, 'remove', `${remove.label}, by an outside client`);
        const refused = await remove.run();
        if (refused) {
          // Nothing was removed: the holder's lease is still the store's, and its run goes on under it, untold.
          await eventually('the bound to pass', () => Date.now() >= removed.at + TOLD_BOUND_MS, { timeoutMs: 2 * TOLD_BOUND_MS });
          const after = await store.count(mapPrefix);
          const told = runOf(events(), first.token);
          const effects = events().filter((e) => e.type === 'effect' && e.token === first.token && e.at > removed.at).length;
          process.stdout.write(`${name}, ${remove.label} with the holder listening: refused (${refused.message.split('\n')[0]}); ${after} of ${before} records `
            + `kept; ${told.length} signals or ends of the holder's run and ${effects} effects of it in the ${TOLD_BOUND_MS} ms after\n`);
          expect(before).toBe(2);
          expect(after).toBe(before);
          expect(told).toEqual([]);
          expect(effects).toBeGreaterThan(0);
        } else {
          const told = await eventually('the holder\'s run to be told', () => runOf(events(), first.token)[0], { timeoutMs: HEARD_MS, intervalMs: 20 });
          const history = events();
          const lastEffect = history.filter((e) => e.type === 'effect' && e.token === first.token).at(-1)!;
          const { violations } = checkHistory(history, { permits: 1, startMarginMs: HEARD_MS / 5 });
          process.stdout.write(`${name}, ${remove.label} with the holder listening: the holder's run told ${told.at - removed.at} ms after the removal `
            + `(${told.type}${'reason' in told ? `: ${told.reason}` : ''}), its last effect at +${lastEffect.at - removed.at} ms (permit ${HEARD_MS} ms, `
            + `its next own write of the entry due at a third of what was left); ${violations.length} violations\n`);
          expect(violations).toEqual([]);
          expect(told.at - removed.at).toBeLessThanOrEqual(TOLD_BOUND_MS);
          expect(lastEffect.at).toBeLessThanOrEqual(told.at);
        }
      });
    }
  });
}

describeStore('PostgreSQL', async () => {
  const server = await ControlledPostgres.start();
  const proxy = await TcpProxy.listen({ target: { host: '127.0.0.1', port: server.port } });
  const viaProxy = new URL(server.url);
  viaProxy.host = proxy.address;
  const admin = new Pool({ connectionString: server.url, max: 2 });
  const refusedOr = (sql: string) => admin.query(sql).then(() => undefined, (error: Error) => error);
  const store: Store = {
    target: () => ({ postgresUrl: viaProxy.toString() }),
    fresh: async () => undefined,
    removals: (mapPrefix) => [
      { label: 'DELETE FROM gatekeeper.records', run: () => refusedOr('DELETE FROM gatekeeper.records') },
      { label: 'TRUNCATE of every table of the schema', run: () => refusedOr('TRUNCATE gatekeeper.records, gatekeeper.lost_marks, gatekeeper.counters') },
      { label: 'DELETE of the semaphore\'s row', run: () => refusedOr(`DELETE FROM gatekeeper.records WHERE map = '${mapPrefix}.${SEMAPHORE_MAP}' AND key = 'billing'`) },
    ],
    count: async (mapPrefix) => Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM gatekeeper.records WHERE map = ANY($1::text[])',
      [LEASE_MAPS.map((map) => `${mapPrefix}.${map}`)])).rows[0].n),
  };
  return { store, proxy, stop: async () => {
    await admin.end();
    await server.quit();
  } };
});

describeStore('Redis', async () => {
  const server = await ControlledRedis.start();
  const proxy = await TcpProxy.listen({ target: { host: '127.0.0.1', port: server.port } });
  const url = `redis://${proxy.address}`;
  const done = (run: () => Promise<unknown>) => run().then(() => undefined, (error: Error) => error);
  const store: Store = {
    target: () => ({ redisUrl: url }),
    fresh: async (mapPrefix) => {
      expect(await new RedisBackend({ url: server.url, mapPrefix }).declareFresh()).toBe(true);
    },
    removals: (mapPrefix) => [
      // What `redis-cli --scan --pattern '{p}:m:*' | xargs redis-cli del` does.
      { label: `DEL of every {${mapPrefix}}:m:* hash`, run: () => done(() => server.withClient(async (client) => {
        const keys = await client.keys(`{${mapPrefix}}:m:*`);
        expect(keys.length).toBeGreaterThan(0);
        await client.del(...keys);
      })) },
      { label: 'FLUSHDB', run: () => done(() => server.withClient((client) => client.flushdb())) },
      { label: 'HDEL of the semaphore\'s field', run: () => done(() => server.withClient(async (client) => {
        expect(await client.hdel(`{${mapPrefix}}:m:${SEMAPHORE_MAP}`, 'billing')).toBe(1);
      })) },
    ],
    count: (mapPrefix) => server.withClient(async (client) => {
      let n = 0;
      for (const map of LEASE_MAPS) n += await client.hlen(`{${mapPrefix}}:m:${map}`);
      return n;
    }),
  };
  return { store, proxy, stop: () => server.stop() };
});
