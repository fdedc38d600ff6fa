import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { ClusterService, type Leader } from '../../lib';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastPermitStore } from '../../lib/cli/hazelcast-permit.store';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { PresenceRecordStore } from '../../lib/presence/presence-record.store';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { systemClock } from '../../lib/core/clock';
import { validateDefinition } from '../../lib/permits/definition.validator';
import { announcement } from '../../lib/presence/presence.rules';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { cli, CLI_BIN as BIN } from '../support/cli-process';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';

/** A TCP listener standing in for a member, counting the connections anyone opens to it. */
async function countingListener(): Promise<{ server: Server; address: string; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, address: `127.0.0.1:${port}`, connections: () => count };
}

describe('nestjs-gatekeeper CLI (built binary, real member)', () => {
  const { clusterName, addresses } = testCluster();
  const mapPrefix = uniquePrefix('cli');
  const env = { GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName };
  const run = (...args: string[]) => cli(['--map-prefix', mapPrefix, ...args], env);
  const json = async (...args: string[]) => {
    const result = await run('--json', ...args);
    expect([result.code, result.stderr]).toEqual([0, '']);
    return JSON.parse(result.stdout);
  };

  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first (npm test does)`);
  });

  it('creates, shows, lists, edits and removes definitions', async () => {
    const created = await run('set', 'billing', '--duration', '30s', '--group-pattern', 'production');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/NAME\s+PERMITS\s+DURATION\s+GROUP\s+ACQUIRER\nbilling\s+1\s+30s\s+production\s+\.\*/);
    // An edit without --duration keeps the stored one (only a new definition needs it).
    expect(await json('set', 'billing', '--permits', '2')).toMatchObject({ name: 'billing', permits: 2, durationMs: 30_000, groupPattern: 'production' });
    expect(await json('show', 'billing')).toMatchObject({ definition: { permits: 2 }, permits: [] });
    expect((await json('list')).map((d: { name: string }) => d.name)).toEqual(['billing']);
    expect(await json('remove', 'billing')).toEqual({ removed: 'billing' });
    expect(await json('list')).toEqual([]);
  });

  it('pauses and resumes, remembering the permits', async () => {
    await json('set', 'reports', '--duration', '1m', '--permits', '3');
    expect(await json('pause', 'reports')).toMatchObject({ permits: 0, pausedFrom: 3 });
    expect((await run('list')).stdout).toContain('0 (paused from 3)');
    expect(await json('resume', 'reports')).toMatchObject({ permits: 3 });
  });

  it('prints durations as they are written, not in ms', async () => {
    await json('set', 'dur-a', '--duration', '6s');
    await json('set', 'dur-b', '--duration', '90000');
    await json('set', 'dur-c', '--duration', '1500ms');
    const table = (await run('list')).stdout;
    expect(table).toMatch(/dur-a\s+1\s+6s\s/);
    expect(table).toMatch(/dur-b\s+1\s+90s\s/);
    expect(table).toMatch(/dur-c\s+1\s+1500ms\s/);
    expect(table).not.toMatch(/\d ms/);
    for (const name of ['dur-a', 'dur-b', 'dur-c']) await json('remove', name);
  });

  describe('migrate', () => {
    const definitions = { 'm-billing': 'production', 'm-export': 'production|staging', 'm-everywhere': '.*', 'm-prodish': 'prod.*', 'm-staging': 'staging' };
    const names = Object.keys(definitions);
    // Set up and cleared through the library, to spend the CLI runs on what is tested.
    let store: HazelcastPermitStore;
    let admin: SemaphoreAdmin;
    beforeAll(async () => {
      store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix });
      await store.connect({ clock: systemClock });
      admin = new SemaphoreAdmin(store, systemClock);
    });
    afterAll(() => store.close());
    beforeEach(async () => {
      for (const [name, groupPattern] of Object.entries(definitions)) await admin.put({ name, duration: '1m', groupPattern });
    });
    afterEach(async () => {
      for (const name of names) await admin.remove(name);
    });
    const patterns = async () =>
      Object.fromEntries((await json('list')).filter((d: { name: string }) => names.includes(d.name)).map((d: { name: string; groupPattern: string }) => [d.name, d.groupPattern]));

    it('by default skips wildcard patterns; the dry run shows each pattern before and after and changes nothing', async () => {
      const before = await patterns();
      const dry = await run('migrate', '--from-group', 'production', '--to-group', 'dr-site', '--dry-run', '--name-pattern', 'm-.*');
      expect(dry.code).toBe(0);
      expect(dry.stdout).toMatch(/^dry run: would move 2 semaphore\(s\) from group "production" to "dr-site"; nothing was written/);
      expect(dry.stdout).toMatch(/NAME\s+FROM\s+TO\s+NOTE\n/);
      expect(dry.stdout).toMatch(/m-billing\s+production\s+dr-site\n/);
      expect(dry.stdout).toMatch(/m-export\s+production\|staging\s+dr-site\|staging\n/);
      expect(dry.stdout).toMatch(/m-everywhere\s+\.\*\s+\(unchanged\)\s+skipped: group pattern is a regex/);
      expect(dry.stdout).toMatch(/m-prodish\s+prod\.\*\s+\(unchanged\)\s+skipped: /);
      expect(dry.stdout).not.toContain('m-staging');
      expect(await patterns()).toEqual(before);

      const done = await json('migrate', '--from-group', 'production', '--to-group', 'dr-site', '--name-pattern', 'm-.*');
      expect(done.changes).toEqual([
        { name: 'm-billing', from: 'production', to: 'dr-site' },
        { name: 'm-export', from: 'production|staging', to: 'dr-site|staging' },
      ]);
      expect(done.skipped.map((x: { name: string; code: string }) => [x.name, x.code])).toEqual([['m-everywhere', 'WILDCARD'], ['m-prodish', 'WILDCARD']]);
      expect(await patterns()).toEqual({ ...before, 'm-billing': 'dr-site', 'm-export': 'dr-site|staging' });
      const wild = await json('migrate', 'm-everywhere', '--from-group', 'production', '--to-group', 'dr-site', '--include-wildcards');
      expect(wild.changes).toEqual([{ name: 'm-everywhere', from: '.*', to: 'dr-site' }]);
    });

    it('puts the patterns back with one --undo, and shows what a migration replaced', async () => {
      const before = await patterns();
      const moved = await run('migrate', '--from-group', 'production', '--to-group', 'dr-site', '--name-pattern', 'm-.*', '--force');
      expect(moved.code).toBe(0);
      expect(moved.stdout).toContain('to put them back: nestjs-gatekeeper migrate --undo --from-group production --to-group dr-site m-billing m-export');
      const shown = await json('show', 'm-export');
      expect(shown.definition).toMatchObject({ groupPattern: 'dr-site|staging', migratedFrom: { groupPattern: 'production|staging', fromGroup: 'production', toGroup: 'dr-site' } });
      expect((await run('show', 'm-export')).stdout).toContain('group pattern before: production|staging');
      expect((await run('list')).stdout).toMatch(/m-export\s+1\s+1m\s+dr-site\|staging \(migrated from production\|staging\)/);
      const undo = await run('migrate', '--undo');
      expect(undo.code).toBe(0);
      expect(undo.stdout).toMatch(/^put back 2 semaphore\(s\)/);
      expect(undo.stdout).toMatch(/m-billing\s+dr-site\s+production/);
      expect(await patterns()).toEqual(before);
      expect((await json('show', 'm-export')).definition.migratedFrom).toBeUndefined();
    });

    it('--undo skips a semaphore whose group pattern was edited since the migration', async () => {
      await json('migrate', '--from-group', 'production', '--to-group', 'dr-site', '--name-pattern', 'm-.*');
      await json('set', 'm-export', '--group-pattern', 'backup');
      const undo = await json('migrate', '--undo', '--from-group', 'production', '--to-group', 'dr-site');
      expect(undo.changes).toEqual([{ name: 'm-billing', from: 'dr-site', to: 'production' }]);
      expect(undo.skipped).toEqual([expect.objectContaining({ name: 'm-export', groupPattern: 'backup', code: 'EDITED_SINCE' })]);
      expect((await patterns())['m-export']).toBe('backup');
      expect((await run('migrate', '--undo', 'm-export')).stdout).toMatch(/m-export\s+backup\s+\(unchanged\)\s+skipped: group pattern edited at /);
    });

    it('warns when no live node is known in the target group, in the dry run and the real run', async () => {
      const dry = await run('migrate', 'm-billing', '--from-group', 'production', '--to-group', 'dr-stie', '--dry-run');
      expect(dry.code).toBe(0);
      expect(dry.stderr).toMatch(/^warning: no live node is known in group "dr-stie"/);
      const done = await run('--json', 'migrate', 'm-billing', '--from-group', 'production', '--to-group', 'dr-stie');
      expect([done.code, done.stderr]).toEqual([0, '']);
      expect(JSON.parse(done.stdout)).toMatchObject({
        changes: [{ name: 'm-billing', to: 'dr-stie' }],
        target: { group: 'dr-stie', liveNodes: [] },
        warnings: [expect.stringContaining('no live node is known in group "dr-stie"')],
      });
    });

    it('refuses a target group with no live instance once instances announce themselves, unless --force', async () => {
      // An app instance of the dr-site group, as presence shows it (what a running module writes).
      const presence = new PresenceRecordStore(new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }));
      await presence.connect();
      try {
        await presence.announce(announcement({ instance: 'app-3/x', acquirer: 'app-3', group: 'dr-site', startedAt: Date.now(), version: '0.1.0' }, Date.now(), 60_000));
        const refused = await run('migrate', 'm-billing', '--from-group', 'production', '--to-group', 'dr-stie');
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('no live node is known in group "dr-stie" (groups with live nodes: dr-site)');
        expect(await patterns()).toMatchObject({ 'm-billing': 'production' });
        const live = await run('--json', 'migrate', 'm-billing', '--from-group', 'production', '--to-group', 'dr-site');
        expect(JSON.parse(live.stdout)).toMatchObject({ target: { group: 'dr-site', liveNodes: ['app-3'] }, warnings: [] });
        const forced = await run('migrate', 'm-staging', '--from-group', 'staging', '--to-group', 'dr-stie', '--force');
        expect(forced.code).toBe(0);
        expect(forced.stderr).toContain('(forced)');
      } finally {
        await presence.withdraw('app-3/x');
        await presence.close();
      }
    });
  });

  it('shows live permits and force-releases one', async () => {
    await json('set', 'manual', '--duration', '1m');
    const store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix });
    await store.connect({ clock: systemClock });
    // A holder that stays connected, so it hears of the force-release and lets go.
    const granted = await new PermitEngine(store, { acquirer: 'app-3001', group: 'production', instance: 'app-3001/1' }, systemClock).tryAcquire('manual');
    if (!granted.granted) throw new Error(granted.message);
    const table = await run('permits', 'manual');
    expect(table.stdout).toMatch(new RegExp(`manual\\s+app-3001\\s+production\\s+${granted.permit.fencingToken}`));
    expect(await json('release', 'manual', String(granted.permit.fencingToken))).toMatchObject({ released: 'manual' });
    await eventually('the holder to let go', async () => (await json('permits', 'manual'))[0].permits.length === 0);
    await store.close();
    const again = await run('release', 'manual', String(granted.permit.fencingToken));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no live permit with fencing token ${granted.permit.fencingToken}`);
  });

  it.each([
    ['an invalid pattern', ['set', 'x', '--duration', '1m', '--group-pattern', '('], 2, /"x": invalid groupPattern/],
    ['a bare duration under a second (milliseconds)', ['set', 'x', '--duration', '90'], 2, /invalid --duration: 90 would be 90 ms \(a bare number is milliseconds\): write '90s' for seconds, or '90ms'/],
    ['a new definition without duration', ['set', 'y', '--permits', '2'], 1, /^error: --duration is required: "y" does not exist yet.*\(e\.g\. --duration 30s\)\n$/],
    ['an unknown semaphore', ['pause', 'ghost'], 1, /"ghost" has no definition/],
    ['a negative count', ['set', 'x', '--permits', '-1'], 2, /argument '-1' is invalid/],
    ['an unknown command', ['frobnicate'], 2, /unknown command 'frobnicate'/],
    ['a subcommand named otherwise', ['schedules', 'create', '--file', 'x.json'], 2, /^error: unknown command 'schedules create': did you mean 'schedules upsert'\? \(the commands of 'schedules': list, show, upsert, pause, resume, remove\)\n/],
    ['an unknown subcommand of a group with a default', ['tasks', 'frobnicate'], 2, /^error: unknown command 'tasks frobnicate' \(the commands of 'tasks': counts, list/],
    ['a migration without target', ['migrate', '--from-group', 'a'], 2, /required option '--to-group <group>'/],
  ])('rejects %s with a clear message and its exit code', async (_, args, code, message) => {
    const result = await run(...(args as string[]));
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message as RegExp);
  });

  it('names --duration when set would create a definition without one, under --json too, and stores nothing', async () => {
    const result = await run('--json', 'set', 'no-duration', '--permits', '2');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toEqual({ error: expect.objectContaining({ code: 'REJECTED', field: 'duration', option: '--duration', semaphore: 'no-duration', message: expect.stringMatching(/^--duration is required/) }) });
    expect((await json('list')).map((d: { name: string }) => d.name)).not.toContain('no-duration');
  });

  it('exits 3 naming a cluster-name mismatch when a member answered but refused the CLI', async () => {
    const result = await cli(['--cluster-name', 'not-the-test-cluster', '--connect-timeout', '2s', 'list'], env);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/answered but refused this client: it is not in a cluster named "not-the-test-cluster"/);
    expect(result.stderr).toContain('give --cluster-name (or GATEKEEPER_HZ_CLUSTER_NAME) the name the members were started with');
    expect(result.stderr).not.toMatch(/cannot reach/i);
  });

  it('exits 3 with the address when the cluster cannot be reached, within a connect timeout written as a duration', async () => {
    const result = await cli(['--members', '127.0.0.1:1', '--connect-timeout', '1s', 'list'], env);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/cannot reach Hazelcast cluster ".*" at 127\.0\.0\.1:1 within 1s/);
    // One line, said once, naming how to point the CLI elsewhere.
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr.match(/cannot reach/gi)).toHaveLength(1);
    expect(result.stderr).toContain('--members host:port');
    expect(result.stderr).toContain('GATEKEEPER_HZ_MEMBERS');
    const plain = await cli(['--json', '--members', '127.0.0.1:1', '--connect-timeout', '500', 'list'], env);
    expect(plain.code).toBe(3);
    expect(JSON.parse(plain.stderr)).toEqual({ error: expect.objectContaining({ code: 'UNREACHABLE', exitCode: 3, message: expect.stringContaining('within 500ms') }) });
  });

  it.each([
    ['a fencing token that is no number', ['release', 'billing', 'abc'], 'token'],
    ['an invalid group pattern', ['set', 'billing', '--group-pattern', '('], 'groupPattern'],
    ['a duration that is none', ['set', 'billing', '--duration', 'soon'], 'duration'],
    ['a connect timeout that is no duration', ['--connect-timeout', 'soon', 'list'], 'connectTimeout'],
    ['an invalid name pattern', ['migrate', '--from-group', 'a', '--to-group', 'b', '--name-pattern', '('], 'namePattern'],
    ['the same group twice', ['migrate', '--from-group', 'a', '--to-group', 'a'], 'toGroup'],
    ['an empty semaphore name', ['pause', ''], 'name'],
    ['an empty election name', ['resign', ''], 'election'],
    ['a semaphore name with a control character', ['pause', 'bill\u001bing'], 'name'],
    ['an election name with a line feed', ['resign', 'lead\ner'], 'election'],
    ['a job name with a control character', ['jobs', 'history', 'Billing\u0007Jobs.charge'], 'job'],
    ['a task id with a C1 control', ['tasks', 'show', 'report:x\u0085y'], 'id'],
    ['a task group\'s type of 1 KB', ['tasks', 'group', 't'.repeat(1024), 'batch'], 'type'],
    ['a schedule id with DEL', ['schedules', 'show', 'night\u007fly'], 'id'],
    ['an allocation name with an escape', ['rebalance', 'queues\u001b[2J'], 'allocation'],
  ])('exits 2 at once on %s, without connecting to anything', async (_, args, field) => {
    const listener = await countingListener();
    try {
      const text = await cli(['--members', listener.address, '--connect-timeout', '20s', ...args], env);
      expect([text.code, text.stdout]).toEqual([2, '']);
      expect(text.stderr).toMatch(/^error: /);
      const asJson = await cli(['--json', '--members', listener.address, '--connect-timeout', '20s', ...args], env);
      expect(asJson.code).toBe(2);
      expect(JSON.parse(asJson.stderr)).toEqual({ error: expect.objectContaining({ code: 'USAGE', exitCode: 2, field, message: expect.any(String) }) });
      // Connecting would have waited up to 20 s; and nothing ever opened a connection to the member's address.
      expect(Math.max(text.ms, asJson.ms)).toBeLessThan(10_000);
      expect(listener.connections()).toBe(0);
    } finally {
      listener.server.close();
    }
  });

  it('prints usage errors of the command line itself as JSON under --json', async () => {
    const unknown = await cli(['--json', '--members', '127.0.0.1:1', 'frobnicate']);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stderr)).toEqual({
      error: { code: 'USAGE', exitCode: 2, type: 'CommanderError', commanderCode: 'commander.unknownCommand', message: "unknown command 'frobnicate'" },
    });
    const rejected = await run('--json', 'pause', 'ghost');
    expect(rejected.code).toBe(1);
    expect(JSON.parse(rejected.stderr)).toEqual({
      error: { code: 'REJECTED', exitCode: 1, type: 'NotFoundError', message: 'Semaphore "ghost" has no definition', semaphore: 'ghost', reason: 'UNKNOWN_SEMAPHORE' },
    });
  });

  it('prints its version, and lists the environment variables and exit codes in --help', async () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8'));
    expect(await cli(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n` });
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const name of ['GATEKEEPER_HZ_MEMBERS', 'GATEKEEPER_HZ_CLUSTER_NAME', 'GATEKEEPER_MAP_PREFIX']) expect(help.stdout).toContain(name);
    expect(help.stdout).toMatch(/Exit codes:\n\s+0\s+done\n\s+1\s+rejected.*\n\s+2\s+usage.*\n\s+3\s+the cluster could not be reached/);
    const migrateHelp = await cli(['migrate', '--help']);
    for (const flag of ['--undo', '--dry-run', '--name-pattern', '--include-wildcards', '--force']) expect(migrateHelp.stdout).toContain(flag);
  });

  describe('cluster status and elections', () => {
    // Its own map prefix: the election's semaphore must not show up in the other tests' lists.
    const prefix = uniquePrefix('cli-elections');
    const runHere = (...args: string[]) => cli(['--map-prefix', prefix, ...args], env);
    const nodes: TestNode[] = [];
    /** The leader as the leading node itself knows it (its own lease), if a node leads. */
    const leading = (): Leader | undefined => nodes.map((n) => n.get(ClusterService)).find((c) => c.isLeader())?.leader();
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

    beforeAll(async () => {
      const common = { mapPrefix: prefix, providers: [], elections: [{ name: 'leader', lease: '2s' }], maxClockSkew: '100ms', membership: { interval: '500ms' } };
      nodes.push(...(await Promise.all([
        startNode({ ...common, identity: { acquirer: 'cli-node-a', group: 'production' } }),
        startNode({ ...common, identity: { acquirer: 'cli-node-b', group: 'dr-site' } }),
      ])));
      await eventually('a leader and both nodes present', () => leading() && nodes.every((n) => n.get(ClusterService).participants().length === 2));
    });
    afterAll(async () => {
      await Promise.all(nodes.map((n) => n.close()));
    });

    it('status lists the live instances and each election with its leader, group, epoch and lease left', async () => {
      const leader = leading()!;
      const [text, asJson] = await Promise.all([runHere('status'), runHere('--json', 'status')]);
      expect([text.code, asJson.code, asJson.stderr]).toEqual([0, 0, '']);
      expect(text.stdout).toMatch(/^Stores, as the 2 live nodes say:\n {2}permits, presence, schedules, history, tasks: Hazelcast \(prefix [^)\n]+\)\n\nparticipants: 2 live \(read just now\)\nACQUIRER\s+GROUP\s+INSTANCE\s+AGE\s+VERSION\s+LEADS\n/);
      for (const node of nodes) {
        const { acquirer, group } = node.gatekeeper.identity;
        const instance = node.get(ClusterService).instanceId;
        const leads = instance === leader.instance ? 'leader' : '';
        expect(text.stdout).toMatch(new RegExp(`\\n${acquirer}\\s+${group}\\s+${escape(instance)}\\s+\\d+(\\.\\d)?m?s\\s+\\S+\\s*${leads}\\n`));
      }
      expect(text.stdout).toMatch(new RegExp(
        `\\nelections: 1\\nELECTION\\s+LEADER\\s+GROUP\\s+EPOCH\\s+LEASE LEFT\\nleader\\s+${leader.acquirer}\\s+${leader.group}\\s+${leader.epoch}\\s+\\d+(\\.\\d)?m?s\\n$`,
      ));
      const status = JSON.parse(asJson.stdout);
      expect(status).toMatchObject({ viewAgeMs: 0, elections: [{ name: 'leader', epoch: leader.epoch, leader: { instance: leader.instance } }] });
      expect(status.participants.map((p: { acquirer: string }) => p.acquirer).sort()).toEqual(['cli-node-a', 'cli-node-b']);
    });

    it('leader shows who leads (the election "leader" unless named); resign hands leadership to the other node with a higher epoch', async () => {
      const before = leading()!;
      const [shown, named] = await Promise.all([runHere('leader'), runHere('--json', 'leader', 'leader')]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`leader of "leader": ${before.acquirer} (group ${before.group}, instance ${before.instance}), epoch ${before.epoch}`);
      expect(shown.stdout).toContain('lease 2s, group pattern .*, acquirer pattern .*');
      expect(JSON.parse(named.stdout)).toMatchObject({ name: 'leader', epoch: before.epoch, leader: { instance: before.instance }, definition: { leaseMs: 2000, paused: false } });
      const resigned = await runHere('resign');
      expect(resigned.code).toBe(0);
      expect(resigned.stdout).toContain(`${before.acquirer} (instance ${before.instance}) resigned "leader" at epoch ${before.epoch}`);
      const after = await eventually('the other node to lead', () => {
        const now = leading();
        return now && now.instance !== before.instance ? now : undefined;
      });
      expect(after.epoch).toBeGreaterThan(before.epoch);
      const again = await runHere('--json', 'resign', 'leader');
      expect(JSON.parse(again.stdout)).toEqual({ election: 'leader', resigned: true, epoch: after.epoch, leader: { instance: after.instance, acquirer: after.acquirer, group: after.group } });
      const back = await eventually('the first node to lead again', () => {
        const now = leading();
        return now && now.instance === before.instance ? now : undefined;
      });
      expect(back.epoch).toBeGreaterThan(after.epoch);
    });

    it('names an election the cluster does not have, exits 1, and leaves the leader alone', async () => {
      const before = leading()!;
      const [shown, asJson, resigned] = await Promise.all([runHere('leader', 'ghost'), runHere('--json', 'leader', 'ghost'), runHere('resign', 'ghost')]);
      const message = 'Election "ghost" is not in the cluster (no semaphore "election:ghost"); elections: leader';
      expect([shown.code, shown.stdout, shown.stderr]).toEqual([1, '', `error: ${message}\n`]);
      expect([resigned.code, resigned.stderr]).toEqual([1, `error: ${message}\n`]);
      expect(JSON.parse(asJson.stderr)).toEqual({ error: { code: 'REJECTED', exitCode: 1, type: 'NotFoundError', message, election: 'ghost', reason: 'UNKNOWN_ELECTION' } });
      expect(leading()).toMatchObject({ instance: before.instance, epoch: before.epoch });
    });
  });

  describe("elections' and allocations' semaphores kept apart from jobs", () => {
    let store: HazelcastPermitStore;
    let admin: SemaphoreAdmin;
    beforeAll(async () => {
      store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix });
      await store.connect({ clock: systemClock });
      admin = new SemaphoreAdmin(store, systemClock);
      // Defined as their runtimes define them; a node holds the election.
      await admin.define(validateDefinition({ name: 'election:leader', duration: '1m', groupPattern: 'production' }));
      await admin.define(validateDefinition({ name: 'allocation:queues', permits: 1000, duration: '1m' }));
      await admin.put({ name: 'k-job', duration: '1m', groupPattern: 'production' });
      const node = new PermitEngine(store, { acquirer: 'app-1', group: 'production', instance: 'app-1/1' }, systemClock);
      expect(await node.tryAcquire('election:leader')).toMatchObject({ granted: true });
    });
    afterAll(async () => {
      for (const name of ['election:leader', 'allocation:queues', 'k-job']) await admin.remove(name);
      await store.close();
    });

    it('list and permits show jobs, saying what they leave out; --all adds the others with their kind', async () => {
      const listed = (await run('list')).stdout;
      expect(listed).toMatch(/^NAME\s+PERMITS\s+DURATION\s+GROUP\s+ACQUIRER\n/);
      expect(listed).toMatch(/\nk-job\s+1\s+1m\s+production\s/);
      expect(listed).not.toMatch(/^(election|allocation):/m);
      expect(listed).toContain('(not shown: the definitions of 2 election/allocation semaphore(s): allocation:queues, election:leader; --all shows them)');
      const all = (await run('list', '--all')).stdout;
      expect(all).toMatch(/NAME\s+KIND\s+PERMITS\s+DURATION\s+GROUP\s+ACQUIRER\n/);
      expect(all).toMatch(/\nallocation:queues\s+allocation\s+1000\s+1m\s/);
      expect(all).toMatch(/\nelection:leader\s+election\s+1\s+1m\s+production\s/);
      expect(all).toMatch(/\nk-job\s+job\s+1\s/);
      // Other tests' jobs may be listed too: only these three are looked at.
      const kinds = (items: Array<{ name: string; kind: string }>) => items.filter((d) => /^(k-job|election:leader|allocation:queues)$/.test(d.name)).map((d) => [d.name, d.kind]);
      expect(kinds(await json('list'))).toEqual([['k-job', 'job']]);
      expect(kinds(await json('list', '--all'))).toEqual([['allocation:queues', 'allocation'], ['election:leader', 'election'], ['k-job', 'job']]);

      const permits = (await run('permits')).stdout;
      expect(permits).not.toMatch(/^election:leader/m);
      expect(permits).toContain('(not shown: the live permits of 1 election/allocation semaphore(s): election:leader; --all shows them)');
      expect((await run('permits', '--all')).stdout).toMatch(/SEMAPHORE\s+KIND\s+HOLDER\s+GROUP\s+TOKEN\s+EXPIRES\s+LEFT\nelection:leader\s+election\s+app-1\s+production\s/);
      expect((await json('permits', 'election:leader'))[0]).toMatchObject({ name: 'election:leader', kind: 'election', permits: [{ acquirer: 'app-1' }] });
      const shown = await run('show', 'election:leader');
      expect(shown.stdout).toContain('kind: election: it backs the leader election "leader" (nestjs-gatekeeper leader leader); its permits change only with --force');
      expect(await json('show', 'allocation:queues')).toMatchObject({ kind: 'allocation', definition: { permits: 1000 } });
    });

    it('refuses to pause, resume or renumber them as jobs, naming the semaphore and the field, unless --force', async () => {
      const paused = await run('pause', 'allocation:queues');
      expect([paused.code, paused.stdout]).toEqual([1, '']);
      expect(paused.stderr).toMatch(/^error: Semaphore "allocation:queues": invalid permits: it backs the allocation "queues", not a job: .*pausing it makes every node give up its resources.*CLI --force/);
      const renumbered = await run('--json', 'set', 'allocation:queues', '--permits', '2');
      expect(JSON.parse(renumbered.stderr).error).toMatchObject({ code: 'REJECTED', exitCode: 1, semaphore: 'allocation:queues', field: 'permits', option: '--permits' });
      expect((await run('set', 'election:nightly', '--duration', '10s')).stderr).toContain('Semaphore "election:nightly": invalid name: it backs the leader election "nightly", not a job');
      expect((await admin.get('allocation:queues')).permits).toBe(1000);
      // Who takes part is no job's permits: it edits without --force.
      expect(await json('set', 'allocation:queues', '--group-pattern', 'production|dr-site')).toMatchObject({ permits: 1000, groupPattern: 'production|dr-site' });
      expect(await json('pause', 'allocation:queues', '--force')).toMatchObject({ permits: 0, pausedFrom: 1000 });
      expect((await run('resume', 'allocation:queues')).code).toBe(1);
      expect(await json('resume', 'allocation:queues', '--force')).toMatchObject({ permits: 1000 });
    });

    it('migrations leave them out: no skipped line for them, and naming one is a usage error that says how to move it', async () => {
      const migrated = await run('migrate', '--from-group', 'production', '--to-group', 'dr-site', '--dry-run', '--force');
      expect(migrated.code).toBe(0);
      expect(migrated.stdout).toMatch(/k-job\s+production\s+dr-site\n/);
      expect(migrated.stdout).not.toMatch(/allocation:queues|election:leader/);
      expect(migrated.stderr).toContain('warning: semaphore "election:leader" lists group "production" and was left alone');
      expect(migrated.stderr).toContain("nestjs-gatekeeper set election:leader --group-pattern 'dr-site'");
      const named = await run('migrate', 'election:leader', '--from-group', 'production', '--to-group', 'dr-site');
      expect([named.code, named.stdout]).toEqual([2, '']);
      expect(named.stderr).toContain('Semaphore "election:leader": invalid names: it backs the leader election "leader", not a job: group migrations move jobs only');
      expect((await admin.get('election:leader')).groupPattern).toBe('production');
    });
  });

  it('takes the map prefix from GATEKEEPER_MAP_PREFIX', async () => {
    await json('set', 'by-env', '--duration', '1m');
    const listed = await cli(['--json', 'list'], { ...env, GATEKEEPER_MAP_PREFIX: mapPrefix });
    expect(JSON.parse(listed.stdout).map((d: { name: string }) => d.name)).toContain('by-env');
    await json('remove', 'by-env');
  });
});
