import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import type { PostgresLostData } from '../../lib/backends/postgres/postgres-backend.options';
import { systemClock } from '../../lib/core/clock';
import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import type { MissedReason } from '../../lib/store/record-map';
import { postgresTool, testPostgresUrl } from '../support/test-postgres';

/**
 * A logical restore into the same running server (`pg_restore --clean`): no connection of a running node is new, and
 * no notification tells of the restored rows. A node with a warm pool must still find it before anything decides on
 * a restored lease: its next read of a map that forgets its records on a restore checks the database's incarnation in
 * the same statement, so its compare-and-set against the restored row fails, and its counters never go back.
 */
describe('PostgreSQL backend after a logical restore into its running server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatekeeper-restore-'));
  const schema = `restore_${randomUUID().slice(0, 8)}`;
  const url = new URL(testPostgresUrl());
  const connection = ['-h', url.hostname, '-p', url.port, '-U', decodeURIComponent(url.username), '-d', url.pathname.slice(1)];
  const run = (tool: string, args: string[]) => execFileSync(postgresTool(tool), [...connection, ...args], { stdio: 'pipe' });
  const backends: PostgresBackend[] = [];
  afterAll(async () => {
    await Promise.all(backends.map((backend) => backend.close()));
    rmSync(dir, { recursive: true, force: true });
    const admin = new Client({ connectionString: testPostgresUrl() });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => admin.end());
  });

  it('a warm node\'s next read finds it: the restored lease is dropped, its compare-and-set fails, its counter jumps', async () => {
    const reports: PostgresLostData[] = [];
    const node = () => new PostgresBackend({ connectionString: testPostgresUrl(), schema, listenCheckMs: 60_000, onLostData: (r) => reports.push(r) });
    const [a, b] = [node(), node()];
    backends.push(a, b);
    await a.open();
    await b.open();
    const [ma, mb] = [await a.map('semaphores', { forgetOnRestore: true }), await b.map('semaphores', { forgetOnRestore: true })];
    const [ca, cb] = [await a.counters(), await b.counters()];
    const missed: MissedReason[] = [];
    await mb.watch({ changed: () => undefined, missed: (reason) => missed.push(reason) });
    expect(await ma.create('billing', 'free@1')).toBe(true);
    await ca.next('token');
    const dump = join(dir, 'state.dump');
    run('pg_dump', ['-Fc', '-n', schema, '-f', dump]);

    // Granted after the backup: the restore takes it back to free.
    expect(await ma.replace({ key: 'billing', value: 'free@1' }, 'held-by-a@2')).toBe(true);
    const handedOut = (await ca.next('token')).value;
    expect((await mb.get('billing'))?.value).toBe('held-by-a@2');
    run('pg_restore', ['--clean', '--single-transaction', dump]);

    // b's connections are the ones it had (the feed checks only every minute here): its next read must see the restore.
    const read = await mb.get('billing');
    expect(read).toBeUndefined();
    expect(await mb.replace({ key: 'billing', value: 'free@1' }, 'held-by-b@2')).toBe(false);
    const since = await mb.lostSince('billing');
    expect(since).toBeDefined();
    expect(missed).toContain('lost-data');
    expect(reports.map((r) => r.forgotten)).toEqual([[`gatekeeper.semaphores billing`]]);
    // A counter a's connections advance again, in the restored row: above what it handed out after the backup.
    const after = await cb.next('token');
    expect(after.value).toBeGreaterThan(handedOut);
    expect(after.lostSince).toBe(since);
  });

  it('a semaphore a restore dropped is rebuilt by a fresh node as it was (paused, the longer permit), not as its options say; an operator\'s own define wins', async () => {
    const other = `${schema}_b`;
    const stores: PermitRecordStore[] = [];
    const nodeOn = async () => {
      const store = new PermitRecordStore(new PostgresBackend({ connectionString: testPostgresUrl(), schema: other, onLostData: () => undefined }));
      await store.connect({ clock: systemClock });
      stores.push(store);
      return { store, admin: new SemaphoreAdmin(store, systemClock, { clockSkewMs: 200 }) };
    };
    try {
      const { admin } = await nodeOn();
      // The module says a minute; an operator raised it to half an hour before the backup.
      const defined = { name: 'billing', permits: 1, durationMs: 60_000, groupPattern: '.*', acquirerPattern: '.*' };
      await admin.define(defined);
      await admin.define({ ...defined, name: 'ledger' });
      await admin.update('billing', { duration: '30m' });
      await admin.pause('billing');
      const dump = join(dir, 'other.dump');
      run('pg_dump', ['-Fc', '-n', other, '-f', dump]);
      await Promise.all(stores.splice(0).map((store) => store.close()));
      run('pg_restore', ['--clean', '--single-transaction', dump]);

      // Every application was stopped for the restore: a node that starts remembers nothing, and has the module's minute.
      const fresh = await nodeOn();
      await fresh.admin.define(defined, { graceDurationMs: 60_000 });
      const { entry } = await fresh.store.read('billing');
      expect(entry?.rebuilt).toBeDefined();
      expect(entry!.graceUntil! - entry!.rebuilt!.lostSince).toBeGreaterThanOrEqual(30 * 60_000);
      // Paused by an operator before the backup: it stays paused, and resumes to what it had.
      expect(entry!.definition).toMatchObject({ permits: 0, durationMs: 30 * 60_000, pausedFrom: 1 });
      // An operator who defines a dropped semaphore anew gets theirs.
      const mine = await fresh.admin.put({ name: 'ledger', permits: 2, duration: '45s' });
      expect(mine).toMatchObject({ permits: 2, durationMs: 45_000 });
      expect((await fresh.store.read('ledger')).entry?.definition).toMatchObject({ permits: 2, durationMs: 45_000 });
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      const admin = new Client({ connectionString: testPostgresUrl() });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${other} CASCADE`).finally(() => admin.end());
    }
  });
});
