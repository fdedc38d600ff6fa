import { join } from 'node:path';
import type { AcquireResult } from '../../lib';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { ControlledCluster } from '../support/cluster-control';
import { eventually } from '../support/eventually';
import { declareFresh } from '../support/fresh-cluster';

/** The member configuration docs/production.md and docs/kubernetes.md give, used as is (imported by every member). */
const MEMBER_CONFIG = join(__dirname, '../../docs/hazelcast/gatekeeper-maps.yaml');

/**
 * The members' own split-brain protection, as the docs configure it (minimum-cluster-size 2), on two real members:
 * a member left alone refuses the library's maps, and the node denies with that reason (fail closed) although the
 * module has no `quorum` option of its own; with the majority back it grants again, with no recovery wait (the
 * survivor kept every partition: one synchronous backup).
 */
describe('split-brain protection from docs/hazelcast/gatekeeper-maps.yaml', () => {
  let cluster: ControlledCluster | undefined;
  let node: TestNode | undefined;
  afterAll(async () => {
    await node?.close();
    await cluster?.quit();
  });

  /** Polls `semaphore` until `done` accepts an answer; on timeout, says what the last answer was. */
  async function pollUntil(what: string, semaphore: string, done: (result: AcquireResult) => boolean): Promise<AcquireResult[]> {
    const seen: AcquireResult[] = [];
    try {
      await eventually(what, async () => {
        seen.push(await node!.gatekeeper.tryAcquire(semaphore));
        return done(seen[seen.length - 1]);
      }, { timeoutMs: 30_000, intervalMs: 100 });
    } catch (error) {
      throw new Error(`${(error as Error).message}; last answer: ${JSON.stringify(seen[seen.length - 1])}`);
    }
    return seen;
  }

  it('denies below minimum-cluster-size with the split-brain reason, and grants again once the majority is back', async () => {
    cluster = await ControlledCluster.start(2, { config: MEMBER_CONFIG });
    await declareFresh(cluster.clientConfig());
    node = await startNode({
      // The default map prefix, which the docs' `gatekeeper.*` pattern names; no `quorum`: the members alone refuse.
      hazelcast: { clientConfig: cluster.clientConfig() },
      // Long enough that a call's deadline (a quarter of it, at most storeTimeout) survives a loaded machine.
      definitions: [{ name: 'nightly', duration: '1m' }, { name: 'hourly', duration: '1m' }],
      providers: [],
    });
    // Polled: on a loaded machine a first call can outlast its deadline (STORE_TIMEOUT), which is not what this tests.
    const both = await pollUntil('a grant with both members up', 'nightly', (r) => r.granted);
    expect(both.filter((r) => !r.granted && /split brain protection/i.test(r.message))).toEqual([]);

    await cluster.kill(1); // SIGKILL: the survivor sees itself alone once the dead member's connections close
    const alone = await pollUntil('the lone member to refuse the maps', 'hourly', (r) => !r.granted && /split brain protection/i.test(r.message));
    expect(alone[alone.length - 1]).toMatchObject({
      granted: false,
      // The members' refusal says this side cannot decide, unlike a call that merely failed.
      reason: 'QUORUM_NOT_MET',
      message: expect.stringContaining('gatekeeper-majority has failed'),
    });
    // Not once granted on the lone member while polling (a transient denial while it noticed is fine).
    expect(alone.filter((r) => r.granted)).toEqual([]);

    await cluster.restart(1);
    const back = await pollUntil('a grant with both members up', 'hourly', (r) => r.granted);
    // The survivor held a backup of every partition, so nothing was lost and nothing waits to recover.
    expect(back.filter((r) => !r.granted && r.reason === 'RECOVERING')).toEqual([]);
  });
});
