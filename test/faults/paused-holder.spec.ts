import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, readLedger, type AppProcess } from '../support/app-process';
import { eventually } from '../support/eventually';
import { testCluster, uniquePrefix } from '../support/test-cluster';

interface Entry { node: string; token: number; at: number }

/**
 * The holder is frozen (SIGSTOP) past its permit's expiry, another node takes over, then the holder is resumed
 * (SIGCONT). The resumed job must notice before its next side effect: no write with its old token after the
 * new holder's first write, i.e. a fenced downstream store would have had nothing stale to reject.
 */
describe('a holder paused past its expiry', () => {
  const apps: AppProcess[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
  });

  it('is overtaken, and its resumed job stops before writing again', async () => {
    const { clusterName, addresses } = testCluster();
    const ledgerFile = join(mkdtempSync(join(tmpdir(), 'gatekeeper-fenced-')), 'ledger.jsonl');
    const env = {
      LEDGER_FILE: ledgerFile, MAP_PREFIX: uniquePrefix('fenced'),
      GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName,
    };
    const script = join(__dirname, '../fixtures/fenced-app.ts');
    const a = await startApp(script, 'node-a', env);
    apps.push(a);
    await eventually('node-a to work under the permit', () => readLedger<Entry>(ledgerFile).length >= 5, { timeoutMs: 15_000 });
    const b = await startApp(script, 'node-b', env);
    apps.push(b);
    const oldToken = readLedger<Entry>(ledgerFile).at(-1)!.token;

    a.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    const takeover = await eventually('node-b to take over', () => readLedger<Entry>(ledgerFile).find((e) => e.node === 'node-b'),
      { timeoutMs: 15_000, intervalMs: 50 });
    a.child.kill('SIGCONT');
    const resumedAt = Date.now();
    await eventually('node-a to notice the loss', () => /stopped: Permit of "fenced" is lost/.test(a.output()), { timeoutMs: 10_000 });
    // Expected behaviour, so one warning line, not an error with a stack.
    expect(a.output()).not.toContain('LeaseLostError');
    await eventually('node-b to keep working', () => readLedger<Entry>(ledgerFile).filter((e) => e.at > resumedAt + 500).length >= 3, { timeoutMs: 10_000 });

    const ledger = readLedger<Entry>(ledgerFile);
    const firstB = ledger.findIndex((e) => e.node === 'node-b');
    expect(takeover.token).toBeGreaterThan(oldToken);
    expect(ledger.slice(firstB).filter((e) => e.node === 'node-a')).toEqual([]);
    // A fenced store keeps the highest token it saw and rejects lower ones: nothing would have been rejected.
    let highest = 0;
    const stale = ledger.filter((e) => (e.token < highest ? true : ((highest = e.token), false)));
    expect(stale).toEqual([]);
    process.stdout.write(`paused holder: node-b took over ${takeover.at - stoppedAt} ms after SIGSTOP; ` +
      `writes by the resumed holder after takeover: 0; stale writes: ${stale.length}\n`);
  });
});
