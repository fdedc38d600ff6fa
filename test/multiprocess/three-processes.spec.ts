import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HazelcastPermitStore, systemClock } from '../../lib';
import { readLedger, startApp, type AppProcess } from '../support/app-process';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

interface Entry { tick: number; acquirer: string; token: number }

const APP = join(__dirname, '../fixtures/ledger-app.ts');

describe('three Node processes, one member, a job every second', () => {
  it('runs every tick exactly once over at least 15 seconds', async () => {
    const ledgerFile = join(mkdtempSync(join(tmpdir(), 'gatekeeper-ledger-')), 'ledger.jsonl');
    const env = { LEDGER_FILE: ledgerFile, MAP_PREFIX: uniquePrefix('multiprocess') };
    const read = () => readLedger<Entry>(ledgerFile);
    let apps: AppProcess[] = [];
    try {
      apps = await Promise.all(['app-3000', 'app-3001', 'app-3002'].map((name) => startApp(APP, name, env)));
      const started = Math.ceil(Date.now() / 1000);
      await eventually('18 seconds of ticks in the ledger', () => read().some((e) => e.tick >= started + 18), { timeoutMs: 40_000, intervalMs: 250 });
    } finally {
      for (const { child } of apps) child.kill('SIGTERM');
      await Promise.all(apps.map(({ child }) => (child.exitCode === null ? once(child, 'exit') : undefined)));
    }
    const entries = read();
    const perTick = new Map<number, Entry[]>();
    for (const e of entries) perTick.set(e.tick, [...(perTick.get(e.tick) ?? []), e]);
    const duplicated = [...perTick.entries()].filter(([, runs]) => runs.length > 1);
    expect(duplicated).toEqual([]);
    const ticks = [...perTick.keys()].sort((x, y) => x - y);
    const first = ticks[0];
    const last = ticks[ticks.length - 1];
    const missing = [];
    for (let t = first; t <= last; t++) if (!perTick.has(t)) missing.push(t);
    expect(missing).toEqual([]);
    expect(last - first + 1).toBeGreaterThanOrEqual(15);
    expect(entries.every((e) => typeof e.token === 'number')).toBe(true);
    // Nest re-raises the signal after its shutdown hooks ran, so a clean stop shows as killed by SIGTERM.
    for (const { child } of apps) expect([child.exitCode, child.signalCode]).toEqual([null, 'SIGTERM']);
    for (const app of apps) expect(app.output()).not.toMatch(/ERROR/);
    // Graceful shutdown released the holder's permit instead of leaving it to expire.
    const store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix: env.MAP_PREFIX });
    await store.connect({ clock: systemClock });
    const { entry } = await store.read('every-second');
    await store.close();
    expect(entry?.permits).toEqual([]);
  });
});
