import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { validateDefinition } from '../../lib/permits/definition.validator';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { systemClock } from '../../lib/core/clock';
import type { PermitStore } from '../../lib/permits/permit-store';
import { HazelcastPermitStore } from '../../lib/cli/hazelcast-permit.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';
import { NotFoundError } from '../../lib/core/errors/not-found.error';

/**
 * Group migrations through the admin API, on both stores: what is selected by default, the dry run's before and
 * after, undo, and the warning for a target group with no known live node.
 */
describe.each([
  ['memory', () => new PermitRecordStore(new MemoryBackend().node())],
  ['hazelcast', () => new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix: uniquePrefix('migrate') })],
] as Array<[string, () => PermitStore]>)('group migration (%s store)', (_, createStore) => {
  let store: PermitStore;
  let admin: SemaphoreAdmin;
  const pattern = async (name: string) => (await admin.get(name)).groupPattern;
  const patterns = async () => Object.fromEntries((await admin.permits()).map((s) => [s.name, s.definition?.groupPattern]));

  beforeEach(async () => {
    store = createStore();
    await store.connect({ clock: systemClock });
    admin = new SemaphoreAdmin(store, systemClock);
    for (const [name, groupPattern] of [
      ['billing', 'production'],
      ['export', 'production|staging'],
      ['both', 'production|dr-site'],
      ['everywhere', '.*'],
      ['prod-ish', 'prod.*'],
      ['staging-only', 'staging'],
    ]) {
      await admin.put({ name, duration: '1m', groupPattern });
    }
  });
  afterEach(async () => {
    await store.close();
  });

  it('by default moves only semaphores restricted to the source group, never a wildcard; the dry run shows before and after and writes nothing', async () => {
    const before = await patterns();
    const dry = await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', dryRun: true });
    expect(dry.changes).toEqual([
      { name: 'billing', from: 'production', to: 'dr-site' },
      { name: 'both', from: 'production|dr-site', to: 'dr-site' },
      { name: 'export', from: 'production|staging', to: 'dr-site|staging' },
    ]);
    expect(dry.skipped.map((s) => [s.name, s.groupPattern, s.code])).toEqual([
      ['everywhere', '.*', 'WILDCARD'],
      ['prod-ish', 'prod.*', 'WILDCARD'],
    ]);
    expect(await patterns()).toEqual(before);

    const done = await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site' });
    expect(done).toMatchObject({ dryRun: false, changes: dry.changes, skipped: dry.skipped });
    expect(await patterns()).toEqual({
      billing: 'dr-site', both: 'dr-site', export: 'dr-site|staging', everywhere: '.*', 'prod-ish': 'prod.*', 'staging-only': 'staging',
    });
    expect((await admin.get('export')).migratedFrom).toMatchObject({ groupPattern: 'production|staging', fromGroup: 'production', toGroup: 'dr-site' });
  });

  it('moves a wildcard only when asked, to the escaped target group', async () => {
    const done = await admin.migrateGroups({ fromGroup: 'production', toGroup: 'eu.dr', names: ['everywhere'], includeWildcards: true });
    expect(done.changes).toEqual([{ name: 'everywhere', from: '.*', to: 'eu\\.dr' }]);
    expect(await pattern('billing')).toBe('production');
  });

  it('selects by names and by a whole-match name pattern, reporting a named semaphore it leaves alone', async () => {
    // Whole match: 'bill' does not select billing.
    const done = await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', names: ['staging-only', 'both'], namePattern: 'bill|exp.*' });
    expect(done.changes.map((c) => c.name)).toEqual(['both', 'export']);
    expect(await pattern('billing')).toBe('production');
    expect(done.skipped).toEqual([
      { name: 'staging-only', groupPattern: 'staging', code: 'NOT_ADMITTED', reason: expect.stringContaining('does not admit group "production"') },
    ]);
    expect(await pattern('prod-ish')).toBe('prod.*');
  });

  it('rejects an unknown named semaphore or a bad request before writing anything', async () => {
    const before = await patterns();
    await expect(admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', names: ['billing', 'ghost'] })).rejects.toThrow(NotFoundError);
    await expect(admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', namePattern: '(' })).rejects.toThrow(/^Invalid migration\.namePattern: /);
    await expect(admin.migrateGroups({ fromGroup: 'production', toGroup: 'production' })).rejects.toThrow(InvalidInputError);
    expect(await patterns()).toEqual(before);
  });

  it('puts every moved pattern back with one undo, keeping the memory through pause, resume and other edits', async () => {
    const before = await patterns();
    await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site' });
    await admin.pause('billing');
    await admin.resume('billing');
    await admin.update('export', { permits: 3 });
    await admin.update('both', { groupPattern: 'dr-site' }); // the pattern the migration wrote: not an edit of it
    const dry = await admin.undoMigration({ dryRun: true });
    expect(dry.changes).toEqual([
      { name: 'billing', from: 'dr-site', to: 'production' },
      { name: 'both', from: 'dr-site', to: 'production|dr-site' },
      { name: 'export', from: 'dr-site|staging', to: 'production|staging' },
    ]);
    expect(await pattern('billing')).toBe('dr-site');
    expect((await admin.undoMigration()).changes).toEqual(dry.changes);
    expect(await patterns()).toEqual(before);
    expect((await admin.get('billing')).migratedFrom).toBeUndefined();
    expect(await admin.undoMigration()).toEqual({ dryRun: false, changes: [], skipped: [] });
  });

  it('undo skips a semaphore whose group pattern was edited since, even when edited back', async () => {
    await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site' });
    await admin.update('export', { groupPattern: 'backup' });
    await admin.update('both', { groupPattern: 'staging' });
    await admin.update('both', { groupPattern: 'dr-site' });
    const undone = await admin.undoMigration();
    expect(undone.changes).toEqual([{ name: 'billing', from: 'dr-site', to: 'production' }]);
    expect(undone.skipped.map((s) => [s.name, s.code])).toEqual([['both', 'EDITED_SINCE'], ['export', 'EDITED_SINCE']]);
    expect(await pattern('export')).toBe('backup');
    expect(await pattern('both')).toBe('dr-site');
  });

  it('undoes only the named semaphores, or only migrations between the groups asked for', async () => {
    await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', names: ['billing'] });
    await admin.migrateGroups({ fromGroup: 'staging', toGroup: 'backup', names: ['staging-only'] });
    const byGroups = await admin.undoMigration({ fromGroup: 'staging', dryRun: true });
    expect(byGroups.changes.map((c) => c.name)).toEqual(['staging-only']);
    expect(byGroups.skipped.map((s) => [s.name, s.code])).toEqual([['billing', 'OTHER_MIGRATION']]);
    const named = await admin.undoMigration({ names: ['billing', 'export'] });
    expect(named.changes.map((c) => c.name)).toEqual(['billing']);
    expect(named.skipped.map((s) => [s.name, s.code])).toEqual([['export', 'NOT_MIGRATED']]);
    expect(await pattern('staging-only')).toBe('backup');
  });

  it('warns when no live node is known in the target group, naming the groups that have one', async () => {
    const dry = await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-stie', dryRun: true });
    expect(dry.target).toEqual({ group: 'dr-stie', liveNodes: [] });
    expect(dry.warnings).toEqual([expect.stringContaining('no live node is known in group "dr-stie"')]);
    const drNode = new PermitEngine(store, { acquirer: 'app-3003', group: 'dr-site', instance: 'app-3003/1' }, systemClock);
    expect(await drNode.tryAcquire('both')).toMatchObject({ granted: true });
    const typo = await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-stie', dryRun: true });
    expect(typo.warnings[0]).toContain('groups with live nodes: dr-site');
    const right = await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', force: true });
    expect(right).toMatchObject({ target: { group: 'dr-site', liveNodes: ['app-3003'] }, warnings: [], forced: true });
  });

  it('leaves elections and allocations out of every migration and undo: not selected, not skipped, named ones refused', async () => {
    // Defined as their runtimes define them: a leader restricted to production, an allocation anywhere.
    await admin.define(validateDefinition({ name: 'election:leader', duration: '10s', groupPattern: 'production' }));
    await admin.define(validateDefinition({ name: 'allocation:queues', permits: 1000, duration: '10s' }));
    const all = await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', includeWildcards: true });
    const mentioned = [...all.changes, ...all.skipped].map((c) => c.name);
    expect(mentioned).toEqual(['billing', 'both', 'everywhere', 'export', 'prod-ish']);
    expect(await pattern('election:leader')).toBe('production');
    expect(await pattern('allocation:queues')).toBe('.*');
    // The one that would have moved, were it a job, is named once, with how to move it; the allocation (any group) is not.
    expect(all.warnings.filter((w) => !w.startsWith('no live node'))).toEqual([
      'semaphore "election:leader" lists group "production" and was left alone: it backs the leader election "leader", not a job: '
        + "group migrations move jobs only; to move it, edit its group pattern (nestjs-gatekeeper set election:leader --group-pattern 'dr-site')",
    ]);
    expect((await admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', namePattern: '(election|allocation):.*' })).changes).toEqual([]);
    const before = await patterns();
    await expect(admin.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', names: ['allocation:queues'] }))
      .rejects.toMatchObject({ kind: 'semaphore', id: 'allocation:queues', field: 'names', message: expect.stringContaining('it backs the allocation "queues", not a job') });
    await expect(admin.undoMigration({ names: ['election:leader'] })).rejects.toMatchObject({ kind: 'semaphore', id: 'election:leader', field: 'names' });
    expect(await patterns()).toEqual(before);
    const undone = await admin.undoMigration();
    expect([...undone.changes, ...undone.skipped].map((c) => c.name)).not.toContain('election:leader');
  });

  it('refuses to pause, resume or change the permits of an election or allocation unless forced; its group pattern and lease edit freely', async () => {
    await admin.define(validateDefinition({ name: 'allocation:queues', permits: 1000, duration: '10s' }));
    const refusals = [
      () => admin.pause('allocation:queues'),
      () => admin.update('allocation:queues', { permits: 2 }),
      () => admin.put({ name: 'allocation:queues', duration: '10s' }), // permits default to 1
      () => admin.put({ name: 'election:nightly', duration: '10s' }), // created by hand
    ];
    for (const refused of refusals) await expect(refused()).rejects.toBeInstanceOf(InvalidInputError);
    await expect(admin.pause('allocation:queues')).rejects.toMatchObject({ kind: 'semaphore', id: 'allocation:queues', field: 'permits' });
    expect((await admin.get('allocation:queues')).permits).toBe(1000);
    expect(await admin.update('allocation:queues', { groupPattern: 'dr-site', duration: '20s', permits: 1000 })).toMatchObject({ permits: 1000, groupPattern: 'dr-site' });
    expect(await admin.pause('allocation:queues', { force: true })).toMatchObject({ permits: 0, pausedFrom: 1000 });
    await expect(admin.resume('allocation:queues')).rejects.toMatchObject({ field: 'permits', message: expect.stringContaining('resuming it lets nodes take part again') });
    expect(await admin.resume('allocation:queues', undefined, { force: true })).toMatchObject({ permits: 1000 });
    await expect(admin.get('election:nightly')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('keeps the old migrate() call working, with the safe default', async () => {
    expect(await admin.migrate('production', 'dr-site', { dryRun: true })).toHaveLength(3);
    await expect(admin.migrate('', 'dr-site')).rejects.toThrow(/^Invalid migration\.fromGroup: /);
  });

  it('refuses, when presence knows the live instances, a target group with none of them, unless forced; a dry run says so', async () => {
    const present = [{ acquirer: 'app-1', group: 'production' }, { acquirer: 'app-3', group: 'dr-site' }];
    const known = new SemaphoreAdmin(store, systemClock, { liveInstances: async () => present });
    const before = await patterns();
    const refused = await known.migrateGroups({ fromGroup: 'production', toGroup: 'dr-stie' }).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect(refused).toMatchObject({ field: 'toGroup', kind: undefined });
    expect((refused as Error).message).toMatch(/^Invalid migration\.toGroup: /);
    expect((refused as Error).message).toContain('no live node is known in group "dr-stie" (groups with live nodes: dr-site, production)');
    expect(await patterns()).toEqual(before);
    const dry = await known.migrateGroups({ fromGroup: 'production', toGroup: 'dr-stie', dryRun: true });
    expect(dry.warnings).toEqual([expect.stringContaining('a real run is refused without force')]);
    const toLive = await known.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site' });
    expect(toLive).toMatchObject({ warnings: [], target: { group: 'dr-site', liveNodes: ['app-3'] } });
    const forced = await known.migrateGroups({ fromGroup: 'staging', toGroup: 'nowhere', force: true });
    expect(forced.changes.map((c) => c.name)).toEqual(['export', 'staging-only']);
    expect(forced.warnings).toEqual([expect.stringContaining('(forced)')]);
    // Presence not in use (nobody announces): an empty target is a warning, as without presence.
    const unknown = new SemaphoreAdmin(store, systemClock, { liveInstances: async () => [] });
    expect((await unknown.migrateGroups({ fromGroup: 'dr-site', toGroup: 'dr-stie' })).warnings).toEqual([expect.stringContaining('live instances are not known here')]);
  });
});
