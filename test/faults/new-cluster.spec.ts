import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'hazelcast-client';
import { startNode, TickJobs, type LedgerEntry, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { cli, CLI_BIN } from '../support/cli-process';
import { ControlledCluster } from '../support/cluster-control';
import { declareFresh } from '../support/fresh-cluster';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';

/**
 * A brand-new cluster and a restarted one hold the same (nothing), so the library makes first grants wait one
 * permit duration on both. `store init` declares a new one new and lifts that wait; on a restarted one, where
 * a holder of the lost state may still run, it refuses and the wait stays. `hazelcast start` runs a member from
 * the installed package, declared new.
 */
describe('the first grants of a cluster', () => {
  const TEN_MINUTES = [{ name: 'billing', duration: '10m' }];
  let cluster: ControlledCluster | undefined;
  let node: TestNode | undefined;

  afterEach(async () => {
    await node?.close();
    await cluster?.quit();
    node = undefined;
    cluster = undefined;
  });

  async function storedEntry(c: ControlledCluster): Promise<Record<string, unknown> | null> {
    const probe = await Client.newHazelcastClient(c.clientConfig());
    try {
      return JSON.parse((await (await probe.getMap<string, string>('gatekeeper.semaphores')).get('billing')) ?? 'null');
    } finally {
      await probe.shutdown();
    }
  }

  /** A cluster declared new, and a node that has run billing once under a 10-minute permit (so it remembers it). */
  async function holdBillingOnADeclaredCluster(options: { proxied?: boolean } = {}): Promise<{ ledger: LedgerEntry[]; jobs: TickJobs; running: ControlledCluster }> {
    const running = await ControlledCluster.start(1, options);
    cluster = running;
    await declareFresh(running.clientConfig());
    const ledger: LedgerEntry[] = [];
    node = await startNode({ ledger, hazelcast: { clientConfig: running.clientConfig() }, definitions: TEN_MINUTES });
    const jobs = node.get(TickJobs);
    await jobs.billing(0);
    expect(ledger).toHaveLength(1);
    return { ledger, jobs, running };
  }

  const cliOn = (c: ControlledCluster, ...args: string[]) => cli(['--members', c.addresses.join(','), '--cluster-name', c.clusterName, ...args]);

  it('on a member nobody declared new, a 10-minute job waits; `store init` lifts the wait and it runs within seconds', async () => {
    cluster = await ControlledCluster.start(1);
    const ledger: LedgerEntry[] = [];
    node = await startNode({ ledger, hazelcast: { clientConfig: cluster.clientConfig() }, definitions: TEN_MINUTES });
    const jobs = node.get(TickJobs);
    for (let tick = 0; tick < 3; tick++) await jobs.billing(tick);
    expect(ledger).toHaveLength(0);
    expect(await storedEntry(cluster)).toMatchObject({ graceUntil: expect.any(Number), rebuilt: { fromRevision: 0 } });
    // Announced once, at warn, with the command that ends it.
    const announced = node.logger.find('warn', 'store init');
    expect(announced).toHaveLength(1);

    const init = await cliOn(cluster, 'store', 'init');
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('billing');

    const declared = Date.now();
    let tick = 3;
    await eventually('billing to run once the cluster is declared new', async () => {
      await jobs.billing(tick++);
      return ledger.length > 0;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    process.stdout.write(`new cluster: a 10-minute job ran ${Date.now() - declared} ms after store init\n`);
    const entry = await storedEntry(cluster);
    expect(entry?.graceUntil).toBeUndefined();
    expect(entry?.lastToken).toBe(ledger[0].token);
    expect(node.logger.find('warn', 'store init')).toHaveLength(1);

    // Now it held a permit: declaring it new again is refused.
    const again = await cliOn(cluster, 'store', 'init');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('permits were granted');
  });

  it('a restarted cluster still waits, and `store init` refuses it, writing nothing', async () => {
    const { ledger, jobs, running } = await holdBillingOnADeclaredCluster();

    await running.stopAll();
    await running.startAll();
    const restarted = running;
    // The node remembers billing and puts it back, waiting out the permit the lost state granted.
    const rebuilt = await eventually('billing to be rebuilt on the restarted cluster', async () => {
      const entry = await storedEntry(restarted);
      return entry?.graceUntil !== undefined ? entry : undefined;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    expect((rebuilt.rebuilt as { fromRevision: number }).fromRevision).toBeGreaterThan(0);

    const init = await cliOn(running, 'store', 'init');
    expect(init.code).toBe(1);
    expect(init.stderr).toMatch(/refused, nothing changed: this cluster held gatekeeper state before .*semaphore "billing".*knew it before its data was lost/s);
    expect(await storedEntry(running)).toEqual(rebuilt);
    for (let tick = 1; tick <= 3; tick++) await jobs.billing(tick);
    expect(ledger).toHaveLength(1);
  });

  it('a node that remembers a semaphore puts it back waiting even on a restarted cluster wrongly declared new before it reconnected', async () => {
    const { ledger, jobs, running } = await holdBillingOnADeclaredCluster({ proxied: true });

    await running.stopAll();
    await running.startAll();
    // The node is kept away (its proxy refuses) while the restarted, empty cluster is declared new behind its back.
    running.proxy(0).refuse();
    await declareFresh({ clusterName: running.clusterName, network: { clusterMembers: running.directAddresses, smartRouting: false }, properties: { 'hazelcast.logging.level': 'OFF' } });
    await running.proxy(0).admit();
    const restarted = running;
    const rebuilt = await eventually('billing to be put back', async () => (await storedEntry(restarted)) ?? undefined, { timeoutMs: 60_000, intervalMs: 250 });
    // Its holder may still run: the node that remembers it knows it was lost, whatever the canaries say.
    expect(rebuilt).toMatchObject({ graceUntil: expect.any(Number), rebuilt: { fromRevision: expect.any(Number) } });
    expect((rebuilt.rebuilt as { fromRevision: number }).fromRevision).toBeGreaterThan(0);
    for (let tick = 1; tick <= 3; tick++) await jobs.billing(tick);
    expect(ledger).toHaveLength(1);
  });

  describe('`hazelcast start` from the package', () => {
    let server: Server | undefined;
    let cacheDir: string | undefined;

    afterEach(async () => {
      server?.close();
      if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
      server = undefined;
    });

    /** A Maven repository on loopback serving the cached member jar, with `sha1` as its published checksum. */
    async function repository(sha1?: string): Promise<{ url: string; requests: string[] }> {
      const jar = await readFile(join(__dirname, '../../.cache/hazelcast/hazelcast-5.6.0.jar'));
      const digest = sha1 ?? createHash('sha1').update(jar).digest('hex');
      const requests: string[] = [];
      server = createServer((req, res) => {
        requests.push(req.url ?? '');
        if (req.url?.endsWith('/hazelcast-5.6.0.jar')) res.end(jar);
        else if (req.url?.endsWith('/hazelcast-5.6.0.jar.sha1')) res.end(`${digest}\n`);
        else res.writeHead(404).end();
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/maven2`, requests };
    }

    it('downloads the jar once, checks it, and starts a member declared new: a 10-minute job runs at once; Ctrl-C stops it', async () => {
      const repo = await repository();
      cacheDir = await mkdtemp(join(tmpdir(), 'gatekeeper-cache-'));
      const port = await freePort();
      const clusterName = `local-${port}`;
      const child = spawn(process.execPath, [CLI_BIN, '--cluster-name', clusterName, 'hazelcast', 'start', '--port', String(port)], {
        env: { ...process.env, GATEKEEPER_MAVEN_REPOSITORY: repo.url, GATEKEEPER_CACHE_DIR: cacheDir, GATEKEEPER_HZ_VERSION: '' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += String(c)));
      child.stderr.on('data', (c) => (stderr += String(c)));
      const exited = once(child, 'exit');
      try {
        await eventually('the member to be up and declared new', () => stdout.includes('declared new'), { timeoutMs: 90_000, intervalMs: 100 });
        expect([...repo.requests].sort()).toEqual(['/maven2/com/hazelcast/hazelcast/5.6.0/hazelcast-5.6.0.jar', '/maven2/com/hazelcast/hazelcast/5.6.0/hazelcast-5.6.0.jar.sha1']);
        expect((await readdir(cacheDir)).sort()).toEqual(['hazelcast-5.6.0.jar', 'hazelcast-5.6.0.jar.sha1']);
        expect(stdout).toContain(`GATEKEEPER_HZ_MEMBERS=127.0.0.1:${port}`);

        const ledger: LedgerEntry[] = [];
        node = await startNode({
          ledger,
          hazelcast: { clientConfig: { clusterName, network: { clusterMembers: [`127.0.0.1:${port}`] }, properties: { 'hazelcast.logging.level': 'OFF' } } },
          definitions: TEN_MINUTES,
        });
        await node.get(TickJobs).billing(0);
        expect(ledger).toHaveLength(1);
        await node.close();
      } finally {
        child.kill('SIGINT');
        const [code] = await exited;
        expect(code).toBe(0);
      }
      expect(stdout).toContain('Member stopped');
      expect(stderr).toBe('');
    });

    it('refuses a port already in use, declaring nothing (a member there would be joined, not started)', async () => {
      const busy = createNetServer();
      busy.listen(0, '127.0.0.1');
      await once(busy, 'listening');
      try {
        const result = await cli(['hazelcast', 'start', '--port', String((busy.address() as AddressInfo).port)]);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('is in use');
      } finally {
        busy.close();
      }
    });

    it('refuses a jar whose checksum does not match, keeping nothing', async () => {
      const repo = await repository('0'.repeat(40));
      cacheDir = await mkdtemp(join(tmpdir(), 'gatekeeper-cache-'));
      const result = await cli(['hazelcast', 'start', '--port', String(await freePort())], {
        GATEKEEPER_MAVEN_REPOSITORY: repo.url, GATEKEEPER_CACHE_DIR: cacheDir, GATEKEEPER_HZ_VERSION: '',
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`the repository publishes ${'0'.repeat(40)}; nothing was kept`);
      expect(await readdir(cacheDir)).toEqual([]);
    });
  });
});
