import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { ClusterSingleton, GatekeeperModule, GatekeeperService, SemaphoreAdminService, type PermitLease } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';

/** Lets the test decide when a running job goes on. */
class Gate {
  private open?: () => void;
  readonly opened = new Promise<void>((resolve) => (this.open = resolve));
  release(): void {
    this.open!();
  }
}

@Injectable()
class Jobs {
  gate = new Gate();
  lease?: PermitLease;

  constructor(private readonly gatekeeper: GatekeeperService) {}

  @ClusterSingleton('export', '10s')
  async export(): Promise<void> {
    this.lease = this.gatekeeper.currentLease();
    await this.gate.opened;
    this.lease!.assertValid();
  }

  @ClusterSingleton('billing', '10s')
  async billing(): Promise<string | undefined> {
    return 'billed';
  }
}

/** What a decorated job's node says in its log: lost permits, shutdown releases, and a job that runs nowhere. */
describe('job lines in the log (memory store, the production tick path)', () => {
  let app: TestingModule;
  let logger: CapturingLogger;
  let clock: FakeClock;

  async function start(definitions = [{ name: 'export', duration: '10s' }, { name: 'billing', duration: '10s' }]) {
    logger = new CapturingLogger();
    clock = new FakeClock(Date.now());
    app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', clock, identity: { group: 'g', acquirer: 'node-1' }, definitions })],
      providers: [Jobs],
    }).setLogger(logger).compile();
    await app.init();
  }
  afterEach(async () => {
    await app?.close();
  });

  it('logs one warning, not an error with a stack, when a job stops because its permit was taken away', async () => {
    await start();
    const jobs = app.get(Jobs);
    const running = jobs.export();
    await eventually('the job to start', () => jobs.lease !== undefined);
    const [permit] = app.get(GatekeeperService).heldPermits();
    expect(await app.get(SemaphoreAdminService).forceRelease('export', permit.fencingToken)).toBe(true);
    await eventually('the running job to be told', () => jobs.lease!.signal.aborted);
    jobs.gate.release();
    await expect(running).resolves.toBeUndefined();
    expect(logger.find('warn', 'Jobs.export stopped: Permit of "export" is lost')).toHaveLength(1);
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  });

  it('logs the permits it releases at shutdown', async () => {
    await start();
    expect(await app.get(Jobs).billing()).toBe('billed');
    const [permit] = app.get(GatekeeperService).heldPermits();
    await app.close();
    expect(logger.find('log', 'Released 1 permit(s) at shutdown')).toEqual([
      `Released 1 permit(s) at shutdown: billing (fencing token ${permit.fencingToken})`,
    ]);
  });

  it('warns once when a job has had no holder anywhere for longer than its duration, and says when it is held again', async () => {
    await start([{ name: 'export', duration: '10s' }, { name: 'billing', duration: '10s', permits: 0 } as never]);
    const jobs = app.get(Jobs);
    expect(await jobs.billing()).toBeUndefined();
    clock.advance(9_000);
    expect(await jobs.billing()).toBeUndefined();
    expect(logger.find('warn', 'no holder')).toEqual([]);
    clock.advance(2_000);
    expect(await jobs.billing()).toBeUndefined();
    clock.advance(5_000);
    expect(await jobs.billing()).toBeUndefined();
    expect(logger.find('warn', 'no holder')).toEqual([
      '"billing" has had no holder on any node for 11s (longer than its 10s duration): it is paused (permits 0; resume it); ' +
        'here Jobs.billing is denied: PAUSED ("billing" is paused (permits: 0))',
    ]);
    await app.get(SemaphoreAdminService).resume('billing', 1);
    expect(await jobs.billing()).toBe('billed');
    expect(logger.find('log', 'is held again')).toEqual(['"billing" is held again, by node-1 (group g)']);
  });
});
