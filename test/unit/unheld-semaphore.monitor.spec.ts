import { DenyReason } from '../../lib';
import type { PermitDenied } from '../../lib/permits/acquire-result';
import { UnheldSemaphoreMonitor } from '../../lib/permits/unheld-semaphore.monitor';

describe('UnheldSemaphoreMonitor', () => {
  const definition = { name: 'export', permits: 1, durationMs: 10_000, groupPattern: 'production', acquirerPattern: '.*' };
  const denied: PermitDenied = { granted: false, semaphore: 'export', reason: DenyReason.GROUP_MISMATCH, message: 'group "dr" does not match' };

  function setup() {
    let now = 0;
    let lastToken = 5;
    const warnings: string[] = [];
    const monitor = new UnheldSemaphoreMonitor(
      { definition: () => definition, livePermits: () => [], lastToken: () => lastToken },
      { warn: (m: unknown) => void warnings.push(String(m)), log: () => undefined },
      () => now,
    );
    return { monitor, warnings, advance: (ms: number) => (now += ms), grantElsewhere: () => (lastToken += 1) };
  }

  it('stays quiet about a release-mode job that another node keeps running between this node\'s ticks', () => {
    const { monitor, warnings, advance, grantElsewhere } = setup();
    for (let i = 0; i < 10; i++) {
      monitor.denied('Jobs.export', denied);
      grantElsewhere(); // a short run elsewhere, never seen held at a tick here
      advance(6_000);
    }
    expect(warnings).toEqual([]);
  });

  it('warns once when nothing was held or granted anywhere for longer than the duration', () => {
    const { monitor, warnings, advance } = setup();
    for (let i = 0; i < 10; i++) {
      monitor.denied('Jobs.export', denied);
      advance(6_000);
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"export" has had no holder on any node for 12s');
    expect(warnings[0]).toContain('groupPattern "production"');
  });

  it('says nothing of the library\'s own recovery wait, and counts the time without a holder from its end', () => {
    const { monitor, warnings, advance } = setup();
    const recovering: PermitDenied = { granted: false, semaphore: 'export', reason: DenyReason.RECOVERING, message: '"export" was rebuilt after its data may have been lost' };
    monitor.denied('Jobs.export', denied);
    for (let i = 0; i < 5; i++) {
      advance(6_000);
      monitor.denied('Jobs.export', recovering);
    }
    expect(warnings).toEqual([]);
    // The wait is over and still nobody holds it: a whole duration more before a warning.
    advance(6_000);
    monitor.denied('Jobs.export', denied);
    expect(warnings).toEqual([]);
    advance(6_000);
    monitor.denied('Jobs.export', denied);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"export" has had no holder on any node for 12s');
  });

  it('names the live instances when presence knows them: none admitted, or admitted but not holding', () => {
    for (const [live, expected] of [
      [[{ acquirer: 'dr-1', group: 'dr' }, { acquirer: 'dr-2', group: 'dr' }], 'no live instance can run it: groupPattern "production" and acquirerPattern ".*" admit none of the 2 live instance(s) (dr-1 (group dr), dr-2 (group dr))'],
      [[{ acquirer: 'dr-1', group: 'dr' }, { acquirer: 'prod-1', group: 'production' }], 'live instance(s) prod-1 (group production) are admitted by groupPattern "production"'],
    ] as const) {
      let now = 0;
      const warnings: string[] = [];
      const monitor = new UnheldSemaphoreMonitor(
        { definition: () => definition, livePermits: () => [], lastToken: () => 5, liveInstances: () => live },
        { warn: (m: unknown) => void warnings.push(String(m)), log: () => undefined },
        () => now,
      );
      for (let i = 0; i < 3; i++) {
        monitor.denied('Jobs.export', denied);
        now += 6_000;
      }
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(expected);
    }
  });
});
