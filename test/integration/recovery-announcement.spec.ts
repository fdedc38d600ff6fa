import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { ClusterSingleton, GatekeeperModule, GatekeeperService } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { ControlledCluster } from '../support/cluster-control';
import { uniquePrefix } from '../support/test-cluster';

@Injectable()
class FirstDayJobs {
  runs = 0;

  @ClusterSingleton('nightly-report', '1m')
  async report(): Promise<string | undefined> {
    this.runs++;
    return 'reported';
  }
}

/**
 * A member nobody declared new (started as Docker or an operator would start it, not by this project's scripts):
 * the node cannot tell it from a cluster that lost its data, so its first grants wait (`RECOVERING`). That wait
 * is announced once per semaphore at `warn`, with when it ends, why, and the command that declares a new cluster;
 * the skipped ticks themselves stay at `verbose`.
 */
describe('a recovery wait on a cluster nobody declared new', () => {
  let cluster: ControlledCluster;
  let app: TestingModule | undefined;

  beforeAll(async () => {
    cluster = await ControlledCluster.start(1);
  });
  afterAll(async () => {
    await app?.close();
    await cluster?.quit();
  });

  it('is announced once at warn across several ticks, saying until when, why, and how to declare the cluster new', async () => {
    const logger = new CapturingLogger();
    app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ identity: { acquirer: 'first-day' }, connectTimeout: '90s', hazelcast: { clientConfig: cluster.clientConfig(), mapPrefix: uniquePrefix('recovering') } })],
      providers: [FirstDayJobs],
    }).setLogger(logger).compile();
    const connectedBy = Date.now();
    await app.init();
    const jobs = app.get(FirstDayJobs);
    const deniedEvents: string[] = [];
    const subscription = app.get(GatekeeperService).events.subscribe((event) => {
      if (event.name === 'gatekeeper.permit.denied') deniedEvents.push(event.reason);
    });

    for (let tick = 0; tick < 4; tick++) expect(await jobs.report()).toBeUndefined();
    expect(jobs.runs).toBe(0);
    subscription.unsubscribe();
    // Every skipped tick is still an event, with its reason code.
    expect(deniedEvents).toEqual(['RECOVERING', 'RECOVERING', 'RECOVERING', 'RECOVERING']);
    const denied = await app.get(GatekeeperService).tryAcquire('nightly-report');
    expect(denied).toMatchObject({ granted: false, reason: 'RECOVERING' });

    const announced = logger.find('warn', 'RECOVERING');
    expect(announced).toHaveLength(1);
    const until = /waits until (\S+): the cluster looks new or restarted \(RECOVERING\)/.exec(announced[0])?.[1];
    expect(until).toBeDefined();
    // When the wait ends, as the denial says: still ahead, and within one permit duration (plus the skew bound on
    // each side of the wait, and once more for the denying node's clock) of the first connection.
    expect(Date.parse(until!)).toBeGreaterThan(Date.now());
    expect(Date.parse(until!)).toBeLessThanOrEqual(Date.now() + 60_000 + 3 * 500);
    expect(Date.parse(until!)).toBeGreaterThanOrEqual(connectedBy + 60_000);
    expect(!denied.granted && denied.message).toContain(until);
    expect(announced[0]).toContain('"nightly-report"');
    expect(announced[0]).toContain('cannot be told from a brand-new one');
    expect(announced[0]).toContain('npx nestjs-gatekeeper store init');
    // The skips say it at verbose, once (the warning says the rest), and nowhere louder.
    expect(logger.find('verbose', 'FirstDayJobs.report skipped: RECOVERING')).toHaveLength(1);
    expect(logger.entries.filter((e) => e.level !== 'verbose' && e.message.includes('skipped'))).toEqual([]);
  });
});
