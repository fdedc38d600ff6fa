import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { tsScriptArgs } from '../support/ts-script';
import { testCluster, uniquePrefix } from '../support/test-cluster';

const APP = join(__dirname, '../fixtures/first-day-app.ts');

/** One line of Nest's default logger (no colours: NO_COLOR), as `{ level, context, message }`. */
interface NestLine { level: string; context: string; message: string }

function nestLines(output: string): NestLine[] {
  const lines: NestLine[] = [];
  for (const line of output.split('\n')) {
    const match = /^\[Nest\] \d+\s+- .+?\s+(LOG|ERROR|WARN|DEBUG|VERBOSE|FATAL) \[([^\]]+)\] (.*)$/.exec(line);
    if (match) lines.push({ level: match[1], context: match[2], message: match[3] });
  }
  return lines;
}

/** A started fixture process with its output kept. */
interface App { name: string; output(): string; stop(): Promise<void>; exited: Promise<unknown> }

function spawnApp(name: string, env: NodeJS.ProcessEnv): App {
  const child = spawn(process.execPath, tsScriptArgs(APP), {
    env: { ...process.env, ...env, NODE_NAME: name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const exited = once(child, 'exit');
  return {
    name,
    output: () => output,
    exited,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const count = (output: string, line: string) => output.split('\n').filter((l) => l === line).length;
const runsOf = (output: string) => output.split('\n').filter((l) => l.startsWith('RAN ')).length;

/**
 * What a new user's app prints on its first day, run as real processes with Nest's default logger (every level
 * shown) and the client's log level left alone: no member at all, and three instances on one member.
 */
describe('start-up logs of a real app process', () => {
  it('with no member, fails within connectTimeout with one line naming what was tried and the ways forward, and nothing of the client\'s', async () => {
    const port = await freePort();
    const app = spawnApp('lonely', {
      NO_COLOR: '1', MAP_PREFIX: uniquePrefix('first-day'), CONNECT_TIMEOUT: '2s',
      GATEKEEPER_HZ_MEMBERS: `127.0.0.1:${port}`, GATEKEEPER_HZ_CLUSTER_NAME: 'nowhere',
    });
    const connectingAt = await eventually('the app to begin connecting', () => app.output().includes('Connecting to Hazelcast cluster') && Date.now(), { timeoutMs: 120_000, intervalMs: 20 });
    const [code] = (await app.exited) as [number | null];
    const failedAfterMs = Date.now() - connectingAt;
    const output = app.output();
    process.stdout.write(`no member: the app failed ${failedAfterMs} ms after it began connecting (connectTimeout 2s)\n`);

    expect(code).not.toBe(0);
    expect(output).not.toContain('READY');
    // Bounded by the timeout, with room for a loaded machine; the 30 s default or a client's own 30 s backoff would not fit.
    expect(failedAfterMs).toBeLessThan(2_000 + 8_000);
    const errors = output.split('\n').filter((l) => l.includes('StoreUnreachableError'));
    expect(errors).toHaveLength(1);
    const [line] = errors;
    expect(line).toContain(`Cannot reach Hazelcast cluster "nowhere" at 127.0.0.1:${port} within 2s`);
    expect(line).toContain('members from GATEKEEPER_HZ_MEMBERS; cluster name from GATEKEEPER_HZ_CLUSTER_NAME');
    expect(line).toContain(`npx nestjs-gatekeeper --cluster-name nowhere hazelcast start --port ${port}`);
    expect(line).toContain(`docker run --rm -p ${port}:5701 -e HZ_CLUSTERNAME=nowhere hazelcast/hazelcast:5.6.0`);
    expect(line).toContain("backend: 'memory'");
    expect(line).toContain('connectInBackground: true');
    // No stack for an expected condition, no cause's stack, and not one line of the client's own.
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toContain('[cause]');
    expect(nestLines(output).filter((l) => l.context === 'Hazelcast')).toEqual([]);
    expect(output).not.toMatch(/Still waiting|gives up at/);
  });

  it.each([
    ['an @Cron expression out of range', 'cron', 'InvalidInputError: @Cron on Reports.run: invalid cronTime: the cron package cannot read "0 61 * * * *"'],
    ['a misspelt option', 'option', 'InvalidInputError: GatekeeperModule options: invalid identity.grup: is not an option (expected one of group, acquirer)'],
  ])('%s: the start fails with one line naming it, no stack', async (_what, mistake, said) => {
    const child = spawn(process.execPath, tsScriptArgs(join(__dirname, '../fixtures/mistaken-app.ts')), { env: { ...process.env, NO_COLOR: '1', MISTAKE: mistake }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += String(chunk)));
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).not.toBe(0);
    expect(output).not.toContain('READY');
    const naming = output.split('\n').filter((line) => line.includes(said));
    expect(naming).toHaveLength(1);
    // Neither a stack of the library's and Nest's frames nor the error's fields listed after it.
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toMatch(/^\s+(where|reason|field):/m);
  });

  it('three instances on one member: one client and one connection each, none of the client\'s lines, and a skip said once, at verbose', async () => {
    const { addresses, clusterName } = testCluster();
    const env = { NO_COLOR: '1', MAP_PREFIX: uniquePrefix('first-day'), GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName };
    const apps = ['quiet-1', 'quiet-2', 'quiet-3'].map((name) => spawnApp(name, env));
    try {
      // Three processes compiling and booting at once on a loaded machine: a generous bound.
      await eventually('three instances to boot', () => apps.every((a) => a.output().includes('READY')), { timeoutMs: 120_000, intervalMs: 200 });
      // Every instance has booted: from here, three more runs of the job are at least two whole ticks on every node.
      const runs = () => apps.reduce((sum, a) => sum + runsOf(a.output()), 0);
      const before = runs();
      await eventually('three more runs of the job', () => runs() >= before + 3, { timeoutMs: 30_000, intervalMs: 100 });
      const skipping = apps.filter((a) => !a.output().includes('RAN '));
      await eventually('a skipped tick said on each other node', () =>
        skipping.every((a) => nestLines(a.output()).some((l) => l.message.includes('skipped: NO_PERMIT_AVAILABLE'))), { timeoutMs: 30_000, intervalMs: 100 });
    } finally {
      await Promise.all(apps.map((a) => a.stop()));
    }

    const holders = apps.filter((a) => a.output().includes('RAN '));
    expect(holders).toHaveLength(1);
    for (const app of apps) {
      const output = app.output();
      const lines = nestLines(output);
      // One hazelcast-client per process, connected once (no throwaway probe client).
      expect([app.name, count(output, 'HZ-CLIENT-CREATED'), count(output, 'HZ-LIFECYCLE CONNECTED')]).toEqual([app.name, 1, 1]);
      // The client's own lines (23 VERBOSE at each boot before) are below the default level.
      expect(lines.filter((l) => l.context === 'Hazelcast')).toEqual([]);
      const afterBoot = lines.slice(lines.findIndex((l) => l.message.includes('Connected to the')) + 1);
      const loud = afterBoot.filter((l) => ['LOG', 'WARN', 'ERROR', 'FATAL'].includes(l.level) && l.context === 'Gatekeeper');
      const skips = lines.filter((l) => l.message.includes('skipped:'));
      if (app === holders[0]) {
        // The holder says once that the job now runs here, however many times it ran.
        expect(runsOf(output)).toBeGreaterThanOrEqual(2);
        expect(loud.filter((l) => l.message.includes('now runs on this node'))).toHaveLength(1);
        expect(loud.filter((l) => !/now runs on this node|Auto-defined|Released \d+ permit/.test(l.message))).toEqual([]);
      } else {
        // The others say they skip once, at verbose, however many ticks they skipped: nothing per tick.
        expect(skips).toHaveLength(1);
        expect(skips.every((l) => l.level === 'VERBOSE')).toBe(true);
        expect(loud.filter((l) => !/Auto-defined/.test(l.message))).toEqual([]);
      }
    }
  });
});
