import { ControlledCluster } from '../support/cluster-control';
import { startApp, type AppProcess } from '../support/app-process';
import { eventually } from '../support/eventually';

const SCRIPT = `${__dirname}/../fixtures/ticking-client.process.ts`;
/** How long the node's event loop must keep turning after the resets: the spin, when it happens, starts at once. */
const WATCH_MS = 3_000;

const ticks = (app: AppProcess) => [...app.output().matchAll(/^TICK (\d+)$/gm)].map((m) => Number(m[1]));

/**
 * Every connection of a node's client is reset in the same instant and reconnects are refused (a proxy or firewall
 * restarting, every member gone). The Node client (5.6/5.7) then re-registers its cluster-view listener on a
 * connection whose socket is reset but not yet closed, fails at once, and retries in the same microtask chain for
 * ever: the process stops serving anything and runs out of memory. The library puts each retry off to the next turn
 * of the event loop (`cluster-view-retry.ts`); the node keeps running and reconnects once the members are reachable.
 */
describe('every connection of a node reset at once, reconnects refused', () => {
  let cluster: ControlledCluster;
  let node: AppProcess | undefined;
  beforeAll(async () => {
    cluster = await ControlledCluster.start(2, { proxied: true });
  });
  afterAll(async () => {
    node?.child.kill('SIGKILL');
    await cluster?.quit();
  });

  it('keeps the node\'s event loop turning, and the node reconnects when the members are back', async () => {
    node = await startApp(SCRIPT, 'ticking', { CLUSTER_NAME: cluster.clusterName, MEMBERS: cluster.addresses.join(',') });
    const proxies = [cluster.proxy(0), cluster.proxy(1)];
    for (const proxy of proxies) proxy.refuse();
    for (const proxy of proxies) proxy.reset();
    const resetAt = Date.now();
    const app = node;
    await eventually(`the node to tick ${WATCH_MS} ms after the resets`, () => ticks(app).some((t) => t >= resetAt + WATCH_MS), { timeoutMs: 4 * WATCH_MS });
    const gets = app.output().split('GET ').length;
    await Promise.all(proxies.map((p) => p.admit()));
    await eventually('a read to succeed again', () => app.output().split('GET ').slice(gets).some((line) => line.startsWith('ok')), { timeoutMs: 60_000 });
    // No gap over a second between ticks: the loop never stalled.
    const after = ticks(app).filter((t) => t >= resetAt);
    const gaps = after.slice(1).map((t, i) => t - after[i]);
    process.stdout.write(`connections reset together: ${after.length} ticks after the resets, longest gap ${Math.max(...gaps)} ms\n`);
    expect(Math.max(...gaps)).toBeLessThan(1_000);
  });
});
