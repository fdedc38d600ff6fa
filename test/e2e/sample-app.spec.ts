import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { testCluster, uniquePrefix } from '../support/test-cluster';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';

interface Run { job: string; node: string; group: string; token: number; tick: number }

const ROOT = join(__dirname, '../..');
const RUN_LINE = /ran (\S+) on (\S+) \(group (\S+), fencing token (\d+), tick (\d+)\)/;
// Colour codes start with ESC; built from its code so the regex holds no control character.
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const stripAnsi = (text: string) => text.replace(ANSI, '');
const nowTick = () => Math.floor(Date.now() / 1000);

/**
 * The real three-instance sample (`node scripts/sample.mjs`, as `npm run sample` runs it) attached to the test
 * member. Everything is read from the instances' "ran <job> on <node> ... tick <t>" log lines; the only clock the
 * test reads is to note when it acted.
 */
describe('the three-instance sample app', () => {
  const { clusterName, addresses } = testCluster();
  // A Hazelcast team's shell: the test run's PostgreSQL and Redis variables are not in it (the CLI would not know
  // which store the sample is on).
  const { GATEKEEPER_PG_URL: _pg, GATEKEEPER_REDIS_URL: _redis, ...runEnv } = process.env;
  const hazelcastEnv = {
    ...runEnv,
    GATEKEEPER_HZ_MEMBERS: addresses.join(','),
    GATEKEEPER_HZ_CLUSTER_NAME: clusterName,
    SAMPLE_MAP_PREFIX: uniquePrefix('sample'),
  };
  /** The environment of the sample and the CLI: Hazelcast's, PostgreSQL's or Redis's (GATEKEEPER_BACKEND tells both). */
  let env: NodeJS.ProcessEnv & { SAMPLE_MAP_PREFIX: string } = hazelcastEnv;
  let sample: ChildProcess;
  let output = '';
  const runs = (job: string) =>
    stripAnsi(output).split('\n').flatMap((line) => {
      const m = RUN_LINE.exec(line);
      return m && m[1] === job ? [{ job, node: m[2], group: m[3], token: Number(m[4]), tick: Number(m[5]) }] : [];
    });
  const byTick = (list: Run[]) => {
    const map = new Map<number, Run[]>();
    for (const r of list) map.set(r.tick, [...(map.get(r.tick) ?? []), r]);
    return map;
  };
  const cli = async (...args: string[]) => {
    await promisify(execFile)(process.execPath, [join(ROOT, 'dist/cli/gatekeeper.cli.js'), '--map-prefix', env.SAMPLE_MAP_PREFIX, ...args], { env });
    return nowTick();
  };
  const cliJson = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'dist/cli/gatekeeper.cli.js'), '--map-prefix', env.SAMPLE_MAP_PREFIX, '--json', ...args], { env });
    return JSON.parse(stdout);
  };
  /** The live owners' shares of the sample's queues, by the CLI (read from the cluster). */
  const queueShares = async () => {
    const status = await cliJson('allocations', 'queues');
    const owners = status.owners.filter((o: { participating: boolean }) => o.participating);
    return { unowned: status.unowned as number, shares: Object.fromEntries(owners.map((o: { acquirer: string; resources: string[] }) => [o.acquirer, o.resources.length])) as Record<string, number> };
  };
  const waitForTick = (job: string, atLeast: number, what: string) =>
    eventually(what, () => runs(job).some((r) => r.tick >= atLeast) || (nowTick() > atLeast + 1 && nowTick()), { timeoutMs: 30_000, intervalMs: 200 });

  // After each: a scenario that failed half-way must not leave its instances running into the next one.
  afterEach(async () => {
    if (sample && sample.exitCode === null && sample.signalCode === null) {
      sample.kill('SIGTERM');
      await once(sample, 'exit');
    }
  });

  it('refuses to start when one of its ports is taken, naming it, before starting any instance', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
    const busy = (taken.address() as AddressInfo).port;
    try {
      const run = spawn(process.execPath, [join(ROOT, 'scripts/sample.mjs'), '--ports', `${await freePort()},${busy},${await freePort()}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let said = '';
      run.stdout?.on('data', (c) => (said += String(c)));
      run.stderr?.on('data', (c) => (said += String(c)));
      const [code] = await once(run, 'exit');
      expect(code).toBe(1);
      expect(said).toContain(`port ${busy} is already in use`);
      expect(said).toContain('--ports');
      expect(said).not.toContain('instance app-');
    } finally {
      taken.close();
    }
  });

  it('on its own member (--hz-port): hints name that port, every instance serves /health and /metrics, and Ctrl-C stops the instances (permits released) before the member', async () => {
    const ports = [await freePort(), await freePort(), await freePort()];
    const hzPort = await freePort();
    const own: NodeJS.ProcessEnv = { ...process.env };
    delete own.GATEKEEPER_HZ_MEMBERS;
    delete own.GATEKEEPER_HZ_CLUSTER_NAME;
    delete own.SAMPLE_MAP_PREFIX;
    delete own.GATEKEEPER_ADMIN_TOKEN;
    // Its own process group, as a terminal runs it: Ctrl-C is SIGINT to every process of the group.
    const run = spawn(process.execPath, [join(ROOT, 'scripts/sample.mjs'), '--ports', ports.join(','), '--hz-port', String(hzPort)], { env: own, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let said = '';
    run.stdout?.on('data', (c) => (said += String(c)));
    run.stderr?.on('data', (c) => (said += String(c)));
    let closed = false;
    run.on('close', () => (closed = true));
    try {
      await eventually('all three instances to listen', () => (said.match(/listening on http/g) ?? []).length === 3, { timeoutMs: 120_000, intervalMs: 200 });
      const text = () => stripAnsi(said);
      // The CLI hints reach the member this run started, not the CLI's default 5701.
      expect(text()).toContain(`npx nestjs-gatekeeper --members 127.0.0.1:${hzPort} pause billing`);
      // The hint for a command that asks a live instance works as printed, with no other setting: the token is the one
      // the instances took (from the same variable), and each instance advertises the address it listens on.
      const hint = text().split('\n').find((line) => line.includes(' jobs describe '))?.replace(/\(.*$/, '').trim();
      expect(hint).toBe(`GATEKEEPER_ADMIN_TOKEN=sample-admin-token-change-me npx nestjs-gatekeeper --members 127.0.0.1:${hzPort} jobs describe BillingJob.charge`);
      const [assignment, , , ...args] = hint!.split(/\s+/);
      const [name, value] = assignment.split('=');
      const described = await eventually('jobs describe, as the hint says', async () => {
        const answer = await promisify(execFile)(process.execPath, [join(ROOT, 'dist/cli/gatekeeper.cli.js'), ...args], { env: { ...own, [name]: value } }).catch(() => undefined);
        return answer?.stdout;
      }, { timeoutMs: 20_000, intervalMs: 500 });
      expect(described).toMatch(new RegExp(`answered by app-(${ports.join('|')}) at http://127\\.0\\.0\\.1:(${ports.join('|')})/gatekeeper/jobs/BillingJob\\.charge`));

      for (const port of ports) {
        const ready = await eventually(`app-${port} ready`, async () => {
          const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
          return res.status === 200 && ((await res.json()) as { status: string; info: Record<string, { connected: boolean }> });
        }, { timeoutMs: 30_000, intervalMs: 250 });
        expect(ready).toMatchObject({ status: 'ok', info: { gatekeeper: { status: 'up', connected: true } } });
        expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
        const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
        expect(metrics.status).toBe(200);
        expect(await metrics.text()).toMatch(new RegExp(`gatekeeper_permit_attempts_total\\{[^}]*node="app-${port}"`));
      }
      // The instances that hold job permits (hold mode keeps them between ticks: billing, reports, dr-check), by their
      // own /status; at least two do once billing and dr-check ran. (The election's and the allocation's permits are
      // released too, but not counted in that line: their loss shows as "expire on its own" below.)
      await eventually('billing and dr-check to run', () => /ran billing on/.test(text()) && /ran dr-check on/.test(text()), { timeoutMs: 30_000, intervalMs: 200 });
      const holding = async () => (await Promise.all(ports.map(async (port) => {
        const status = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as { held: Array<{ semaphore: string }> };
        return status.held.some((p) => ['billing', 'reports', 'dr-check'].includes(p.semaphore)) ? [`app-${port}`] : [];
      }))).flat();
      const holders = await eventually('two instances to hold permits', async () => {
        const now = await holding();
        return now.length >= 2 && now;
      }, { timeoutMs: 30_000, intervalMs: 250 });

      process.kill(-run.pid!, 'SIGINT');
      await eventually('the sample to exit', () => closed, { timeoutMs: 60_000, intervalMs: 100 });
      expect(run.exitCode).toBe(0);
      const lines = text().split('\n');
      // Every holder says it released its permits; nobody lost the cluster on the way out.
      const released = ports.map((p) => `app-${p}`).filter((node) => lines.some((l) => l.startsWith(`[${node}]`) && /Released \d+ permit\(s\) at shutdown/.test(l)));
      const lost = lines.filter((l) => /Cluster unreachable|expire on its own/.test(l));
      // A holder without the line shows its last lines, to tell why.
      // (A holder whose drain waits for a running job longer than its hold-mode permit lives has nothing left to release:
      // ticks are denied NOT_READY while draining, so that permit lapses unrefreshed. What the finding was about is the
      // instances losing the cluster under them, which "lost" catches.)
      const silent = holders.filter((h) => !released.includes(h)).map((h) => lines.filter((l) => l.startsWith(`[${h}]`)).slice(-6));
      expect({ lost, someReleased: released.length > 0 }).toEqual({ lost: [], someReleased: true });
      if (silent.length > 0) process.stdout.write(`sample: holders with no release line at shutdown: ${JSON.stringify(silent)}\n`);
      // The member went last, once the instances were gone: its port is free again.
      const stopping = lines.findIndex((l) => l.includes('Stopping the Hazelcast member'));
      const lastInstanceLine = lines.reduce((last, l, i) => (/^\[app-\d+\]/.test(l) ? i : last), -1);
      expect(stopping).toBeGreaterThan(lastInstanceLine);
      expect(lines).toContain('Stopped.');
      await eventually('the member to be gone', async () => {
        const probe = createServer();
        return new Promise<boolean>((resolve) => {
          probe.once('error', () => resolve(false));
          probe.listen(hzPort, '127.0.0.1', () => probe.close(() => resolve(true)));
        });
      }, { timeoutMs: 20_000, intervalMs: 250 });
    } finally {
      // SIGTERM, not SIGKILL: the script then stops the member it started (which runs in a group of its own).
      if (!closed) {
        process.kill(-run.pid!, 'SIGTERM');
        await eventually('the sample to stop', () => closed, { timeoutMs: 60_000, intervalMs: 100 });
      }
    }
  }, 300_000);

  it.each(['hazelcast', 'postgres', 'redis'])('on %s: runs billing once per tick, reports on two, the digest on the leader, 4 queues each, follows pause, migrate and a killed holder', async (backend) => {
    env = backend === 'postgres'
      ? { ...process.env, GATEKEEPER_BACKEND: 'postgres', GATEKEEPER_PG_URL: testPostgresUrl(), SAMPLE_MAP_PREFIX: uniquePrefix('sample-pg') }
      : backend === 'redis'
        ? { ...process.env, GATEKEEPER_BACKEND: 'redis', GATEKEEPER_REDIS_URL: testRedisUrl(), SAMPLE_MAP_PREFIX: uniquePrefix('sample-redis') }
        : hazelcastEnv;
    // The test's own prefix on the test's Redis, which no node used: declared new, as the sample does on a server it
    // starts (on a server it is given, it leaves that to `store init`), so the first ticks need no recovery wait.
    if (backend === 'redis') await cli('store', 'init');
    output = '';
    const ports = [await freePort(), await freePort(), await freePort()];
    sample = spawn(process.execPath, [join(ROOT, 'scripts/sample.mjs'), '--ports', ports.join(',')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    sample.stdout?.on('data', (c) => (output += String(c)));
    sample.stderr?.on('data', (c) => (output += String(c)));
    await eventually('all three instances to listen', () => (output.match(/listening on http/g) ?? []).length === 3, { timeoutMs: 60_000, intervalMs: 200 });
    const pids = new Map([...stripAnsi(output).matchAll(/instance (app-\d+) \(group \S+\) pid (\d+)/g)].map((m) => [m[1], Number(m[2])]));
    // The CLI lines it prints reach the store it runs on.
    if (backend === 'redis') expect(stripAnsi(output)).toContain(`npx nestjs-gatekeeper --backend redis --redis-url ${env.GATEKEEPER_REDIS_URL} --map-prefix ${env.SAMPLE_MAP_PREFIX} pause billing`);
    const drNode = `app-${ports[2]}`;
    const allUp = nowTick();

    // 1. Billing on exactly one instance per tick; reports on two. Reports fires every 3 s: its runs are grouped by
    //    the 3 s slot they fall in (a run logged late under load lands in a later second of the same slot), and only
    //    slots that ended 3 s before the last run read are judged (the second node's line of the newest slot may not
    //    be written yet).
    const slot = (tick: number) => tick - (tick % 3);
    await waitForTick('reports', allUp + 10, 'a few ticks of every job');
    expect([...byTick(runs('billing')).values()].every((r) => r.length === 1)).toBe(true);
    const judged = runs('reports').filter((r) => slot(r.tick) > allUp && slot(r.tick) <= allUp + 7);
    const reportSlots = [...byTick(judged.map((r) => ({ ...r, tick: slot(r.tick) }))).entries()];
    expect(reportSlots.length).toBeGreaterThanOrEqual(2);
    expect(reportSlots.filter(([, rs]) => new Set(rs.map((r) => r.node)).size !== 2)).toEqual([]);
    expect(new Set(runs('dr-check').map((r) => r.node))).toEqual(new Set([drNode]));

    // 1a. Runtime schedules: each instance upserted the same two tenant schedules at start-up (idempotent by id);
    //     each tick of each runs on one instance, and its history is in the cluster (the CLI reads it).
    await eventually('tenant reports running', () => runs('report-acme').length >= 2 && runs('report-globex').length >= 1, { timeoutMs: 30_000, intervalMs: 200 });
    expect([...byTick(runs('report-acme')).values()].every((r) => r.length === 1)).toBe(true);
    expect(stripAnsi(output)).toMatch(/schedule report-acme: (created|unchanged|updated)/);
    const tenantHistory = await eventually('the tenant schedule in the history', async () => {
      const history = await cliJson('jobs', 'history', 'report-acme');
      return history.runs?.length >= 2 ? history : undefined;
    }, { timeoutMs: 30_000, intervalMs: 1_000 });
    expect(tenantHistory.runs[0]).toMatchObject({ trigger: 'schedule', outcome: 'completed' });

    // 1b. The 12 queues: 4 on each instance, as the CLI reads the allocation from the cluster, and in the logs.
    await eventually('4 queues on each instance', async () => {
      const { unowned, shares } = await queueShares();
      return unowned === 0 && Object.keys(shares).length === 3 && Object.values(shares).every((n) => n === 4);
    }, { timeoutMs: 30_000, intervalMs: 500 });
    expect(stripAnsi(output)).toMatch(/app-\d+ consumes \d+ more queue\(s\): queue-\d+@\d+/);

    // 1c. The recon batch (distributed tasks): every 20 s one instance splits a batch into 12 record sets, the
    //     three instances reconcile them, and the batch joins exactly once.
    const reconLines = () => stripAnsi(output).split('\n');
    const batch = await eventually('a recon batch joined', () => reconLines().map((l) => /recon (batch-\d+): joined on/.exec(l)?.[1]).find(Boolean), { timeoutMs: 40_000, intervalMs: 200 });
    const sets = reconLines().flatMap((l) => {
      const m = new RegExp(`recon ${batch}: record set (\\d+)/12 on (app-\\d+)`).exec(l);
      return m ? [{ set: Number(m[1]), node: m[2] }] : [];
    });
    expect(new Set(sets.map((x) => x.set)).size).toBe(12);
    expect(new Set(sets.map((x) => x.node)).size).toBeGreaterThan(1);
    expect(reconLines().filter((l) => l.includes(`recon ${batch}: joined on`))).toHaveLength(1);
    expect(reconLines().filter((l) => l.includes(`recon ${batch}: split into 12`))).toHaveLength(1);
    // ... and in the CLI, read from the cluster.
    expect(await cliJson('tasks', 'group', 'recon-record-set', batch!)).toMatchObject({ total: 12, finished: 12, failed: 0, states: { done: 12 } });
    expect((await cliJson('tasks'))['recon-record-set'].done).toBeGreaterThanOrEqual(12);

    // 2. Pausing through the CLI stops billing everywhere within one tick (2 s); resuming starts it again.
    const paused = await cli('pause', 'billing');
    await waitForTick('reports', paused + 7, 'ticks after the pause');
    expect(runs('billing').filter((r) => r.tick >= paused + 2)).toEqual([]);
    const resumed = await cli('resume', 'billing');
    await eventually('billing to run again after resume', () => runs('billing').some((r) => r.tick >= resumed), { timeoutMs: 10_000, intervalMs: 200 });

    // 3. Migrating production to dr-site moves billing to the dr-site instance at the holder's next refresh.
    const migrated = await cli('migrate', '--from-group', 'production', '--to-group', 'dr-site');
    await waitForTick('billing', migrated + 6, 'billing ticks after the migration');
    const afterMigration = runs('billing').filter((r) => r.tick >= migrated + 4);
    expect(afterMigration.length).toBeGreaterThan(0);
    expect(new Set(afterMigration.map((r) => r.node))).toEqual(new Set([drNode]));

    // 4. Open billing to every group again, then SIGKILL its holder: another instance takes over within the
    //    permit's duration (6 s) plus one tick (2 s).
    await cli('set', 'billing', '--group-pattern', '.*');
    const holder = runs('billing').at(-1)!.node;
    process.kill(pids.get(holder)!, 'SIGKILL');
    const killed = nowTick();
    await waitForTick('billing', killed + 10, 'a billing run by another instance');
    const takeover = runs('billing').find((r) => r.tick > killed && r.node !== holder);
    expect(takeover).toBeDefined();
    expect(takeover!.tick - killed).toBeLessThanOrEqual(6 + 2 + 1);
    expect(takeover!.token).toBeGreaterThan(Math.max(...runs('billing').filter((r) => r.node === holder).map((r) => r.token)));

    process.stdout.write(`sample e2e on ${backend}: takeover ${takeover!.tick - killed} s after SIGKILL of ${holder}; ` +
      `first dr-site billing tick ${afterMigration[0].tick - migrated} s after migrate; ${runs('billing').length} billing runs\n`);
    // Over the whole run: no billing tick ran twice.
    expect([...byTick(runs('billing')).entries()].filter(([, r]) => r.length > 1)).toEqual([]);

    // 5. The leader-only digest: on one instance per tick (the leader), its epoch never going back, still running
    //    after the kill (which may have hit the leader), and the log names the leader.
    await waitForTick('digest', killed + 10, 'a digest after the kill');
    const digests = runs('digest').sort((a, b) => a.tick - b.tick);
    expect([...byTick(digests).entries()].filter(([, r]) => new Set(r.map((d) => d.node)).size > 1)).toEqual([]);
    expect(digests.filter((d, i) => i > 0 && d.token < digests[i - 1].token)).toEqual([]);
    expect(stripAnsi(output)).toMatch(/Elected leader of "leader" \(epoch \d+\)/);

    // 6. The killed instance's 4 queues moved to the two survivors: 6 each, none unowned.
    await eventually('6 queues on each survivor', async () => {
      const { unowned, shares } = await queueShares();
      return unowned === 0 && Object.keys(shares).length === 2 && !(holder in shares) && Object.values(shares).every((n) => n === 6);
    }, { timeoutMs: 30_000, intervalMs: 500 });

    // Ctrl-C stops everything cleanly.
    sample.kill('SIGINT');
    const [code] = await once(sample, 'exit');
    expect(code).toBe(0);
    expect(stripAnsi(output)).toContain('Stopped.');
  });
});
