import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HazelcastPermitStore, PermitEngine, systemClock } from '../../lib';
import { eventually } from '../support/eventually';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';

const BIN = join(__dirname, '../../dist/cli/gatekeeper.cli.js');

/** Runs the built binary as a user would, against the test member. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    child.stderr.on('data', (c) => (stderr += String(c)));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
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
    expect(created.stdout).toMatch(/NAME\s+PERMITS\s+DURATION\s+GROUP\s+ACQUIRER\nbilling\s+1\s+30000 ms\s+production\s+\.\*/);
    expect(await json('set', 'billing', '--permits', '2')).toMatchObject({ name: 'billing', permits: 2, groupPattern: 'production' });
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

  it('migrates every semaphore admitting a group, with a dry run that changes nothing', async () => {
    await json('set', 'export', '--duration', '1m', '--group-pattern', 'prod.*');
    await json('set', 'dr-only', '--duration', '1m', '--group-pattern', 'dr-site');
    const dry = await json('migrate', '--from-group', 'production', '--to-group', 'dr-site', '--dry-run');
    expect(dry.changes).toContainEqual({ name: 'export', from: 'prod.*', to: 'dr-site' });
    expect(dry.changes.map((c: { name: string }) => c.name)).not.toContain('dr-only');
    expect((await json('show', 'export')).definition.groupPattern).toBe('prod.*');
    const done = await json('migrate', '--from-group', 'production', '--to-group', 'dr-site');
    expect(done.changes).toEqual(dry.changes);
    expect((await json('show', 'export')).definition.groupPattern).toBe('dr-site');
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
    ['an invalid pattern', ['set', 'x', '--duration', '1m', '--group-pattern', '('], 1, /"x": invalid groupPattern/],
    ['a new definition without duration', ['set', 'y'], 1, /"y": invalid duration/],
    ['an unknown semaphore', ['pause', 'ghost'], 1, /"ghost" has no definition/],
    ['a negative count', ['set', 'x', '--permits', '-1'], 2, /argument '-1' is invalid/],
    ['an unknown command', ['frobnicate'], 2, /unknown command 'frobnicate'/],
    ['a migration without target', ['migrate', '--from-group', 'a'], 2, /required option '--to-group <group>'/],
  ])('rejects %s with a clear message and its exit code', async (_, args, code, message) => {
    const result = await run(...(args as string[]));
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message as RegExp);
  });

  it('exits 3 with the address when the cluster cannot be reached', async () => {
    const result = await cli(['--members', '127.0.0.1:1', '--connect-timeout', '500', 'list'], env);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/cannot reach Hazelcast cluster ".*" at 127\.0\.0\.1:1/);
  });
});
