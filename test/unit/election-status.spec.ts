import { clusterOverview, electionStatuses, findElection } from '../../lib/elections/election-status';
import type { Permit, SemaphoreStatus } from '../../lib';
import { leaderText, resignText, statusText } from '../../lib/cli/cli-cluster-format';

const NOW = 1_700_000_000_000;
const definition = (name: string, permits = 1) => ({ name, permits, durationMs: 2_000, groupPattern: '.*', acquirerPattern: 'app-.*' });
const permit = (semaphore: string, acquirer: string, fencingToken: number, extra: Partial<Permit> = {}): Permit => ({
  semaphore, acquirer, group: 'production', instance: `${acquirer}/1`, fencingToken,
  grantedAt: NOW - 5_000, refreshedAt: NOW - 500, expiresAt: NOW + 1_500, ...extra,
});
const status = (name: string, permits: Permit[], extra: Partial<SemaphoreStatus> = {}): SemaphoreStatus => ({
  name, definition: definition(name), permits, lastToken: permits.at(-1)?.fencingToken, ...extra,
});

describe('election status (operator view)', () => {
  it('lists only election semaphores, by name, with leader, epoch, lease left and definition', () => {
    const elections = electionStatuses([
      status('billing', [permit('billing', 'app-1', 3)]),
      status('election:zeta', []),
      status('election:leader', [permit('election:leader', 'app-2', 7)]),
    ], NOW);
    expect(elections.map((e) => e.name)).toEqual(['leader', 'zeta']);
    expect(elections[0]).toEqual({
      name: 'leader', semaphore: 'election:leader', leader: { instance: 'app-2/1', acquirer: 'app-2', group: 'production' },
      epoch: 7, since: NOW - 5_000, leaseLeftMs: 1_500, lastEpoch: 7, steppingDown: undefined,
      definition: { leaseMs: 2_000, groupPattern: '.*', acquirerPattern: 'app-.*', paused: false },
    });
    expect(elections[1]).toMatchObject({ leader: undefined, epoch: undefined, lastEpoch: undefined });
  });

  it('shows no leader while a revoked or released leader steps down, nor once its lease lapsed', () => {
    const revoked = status('election:leader', [permit('election:leader', 'app-2', 7, { revokedAt: NOW - 10 })]);
    expect(findElection([revoked], 'leader', NOW)).toMatchObject({ leader: undefined, epoch: undefined, steppingDown: 7, lastEpoch: 7 });
    const released = status('election:leader', [permit('election:leader', 'app-2', 7, { released: true })]);
    expect(findElection([released], 'leader', NOW)).toMatchObject({ leader: undefined, steppingDown: 7 });
    expect(findElection([status('election:leader', [permit('election:leader', 'app-2', 7)])], 'leader', NOW + 1_500)).toMatchObject({ leader: undefined, steppingDown: undefined });
  });

  it('leaves out a removed election nobody holds, and says paused when permits are 0', () => {
    const removed = status('election:old', [], { definition: undefined, lastToken: 4 });
    const paused = status('election:leader', [], { definition: definition('election:leader', 0), lastToken: 9 });
    expect(findElection([removed, paused], 'old', NOW)).toBeUndefined();
    expect(findElection([removed, paused], 'leader', NOW)).toMatchObject({ definition: { paused: true }, lastEpoch: 9 });
  });

  it('gives each participant its age and the elections it leads, and says how old the view is', () => {
    const presence = (acquirer: string, startedAt: number) => ({
      instance: `${acquirer}/1`, acquirer, group: 'production', version: '0.1.0', startedAt, refreshedAt: NOW, expiresAt: NOW + 1_000,
    });
    const overview = clusterOverview({
      participants: [presence('app-1', NOW - 3_723_000), presence('app-2', NOW - 1_200)],
      viewAgeMs: 250,
      semaphores: [status('election:leader', [permit('election:leader', 'app-2', 7)])],
    }, NOW);
    expect(overview).toMatchObject({ at: NOW, viewAgeMs: 250 });
    expect(overview.participants.map((p) => [p.acquirer, p.ageMs, p.leads])).toEqual([['app-1', 3_723_000, []], ['app-2', 1_200, ['leader']]]);
    expect(clusterOverview({ participants: [], viewAgeMs: undefined, semaphores: [] }, NOW).viewAgeMs).toBeNull();
    expect(statusText(overview)).toBe([
      'participants: 2 live (view 250ms old)',
      'ACQUIRER  GROUP       INSTANCE  AGE    VERSION  LEADS',
      'app-1     production  app-1/1   1h02m  0.1.0',
      'app-2     production  app-2/1   1.2s   0.1.0    leader',
      '',
      'elections: 1',
      'ELECTION  LEADER  GROUP       EPOCH  LEASE LEFT',
      'leader    app-2   production  7      1.5s',
    ].join('\n'));
  });

  it('tells people why nobody leads, and what a resign did', () => {
    const paused = findElection([status('election:leader', [], { definition: definition('election:leader', 0), lastToken: 9 })], 'leader', NOW)!;
    expect(leaderText(paused)).toBe('nobody leads "leader" now (paused)\nlease 2s, group pattern .*, acquirer pattern app-.*, paused');
    const stepping = findElection([status('election:leader', [permit('election:leader', 'app-2', 7, { revokedAt: NOW })])], 'leader', NOW)!;
    expect(statusText({ at: NOW, viewAgeMs: null, participants: [], elections: [stepping] })).toContain('leader    (none: epoch 7 stepping down)');
    expect(resignText({ election: 'leader', resigned: false })).toBe('nobody leads "leader" now: nothing to resign');
    expect(resignText({ election: 'leader', resigned: true, epoch: 7, leader: { instance: 'app-2/1', acquirer: 'app-2', group: 'production' } }))
      .toMatch(/^app-2 \(instance app-2\/1\) resigned "leader" at epoch 7: /);
  });
});
