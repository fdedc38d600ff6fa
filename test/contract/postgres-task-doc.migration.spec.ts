import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import { migrate, SCHEMA_VERSION } from '../../lib/backends/postgres/postgres-schema';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';

/** The columns claims are found by, as migration 3 generated them from each value. */
const FIELDS = 'type, state, priority, seq, not_before, claim_epoch, claim_expires, finished_at, uncounted, group_name';

/** Tasks as a version-4 schema held them: one of each state, with and without a claim, a group, a finish, marks. */
const TASKS: Record<string, object> = {
  pending: { id: 'pending', type: 'mail', state: 'pending', priority: 5, seq: 1, notBefore: 0, payload: { to: 'a@example.com' } },
  due: { id: 'due', type: 'mail', state: 'pending', priority: 0, seq: 2, notBefore: 1_764_000_000_000, group: { name: 'batch-7' } },
  running: { id: 'running', type: 'export', state: 'running', priority: 0, seq: 3, notBefore: 0, claim: { epoch: 12, expiresAt: 1_764_000_005_000, node: 'n-1' } },
  done: { id: 'done', type: 'export', state: 'done', priority: 0, seq: 4, notBefore: 0, finishedAt: 1_764_000_009_000, uncounted: true, group: { name: 'batch-7' } },
};

/**
 * Migration 5 (issue 50): the tasks' claim fields are generated from `doc`, which a trigger sets from the value on every
 * write, so a write parses its value once instead of once per field. Upgrading a version-4 schema that holds tasks keeps
 * every row's fields as they were, tells nobody anything (no `NOTIFY` per pending task), and every later write, by the
 * library or anyone else, under any `session_replication_role`, keeps the fields up to date.
 */
describe('PostgreSQL: the tasks table parses each value once (migration 5)', () => {
  const schema = `taskdoc_${randomUUID().slice(0, 8)}`;
  const channel = `${schema}_changes`;
  const admin = new Pool({ connectionString: testPostgresUrl(), max: 1 });
  const listener = new Client({ connectionString: testPostgresUrl() });
  const heard: string[] = [];
  const fields = async () => (await admin.query(`SELECT key, ${FIELDS}, doc = value::jsonb AS doc_matches FROM ${schema}.tasks ORDER BY key`)).rows;

  beforeAll(async () => {
    await listener.connect();
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query(`LISTEN "${channel}"`);
    const client = await admin.connect();
    try {
      expect(await migrate(client, schema, channel, 4)).toBe(0);
    } finally {
      client.release();
    }
  });
  afterAll(async () => {
    await listener.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('keeps every field of the tasks a version-4 schema held, tells nothing, and keeps them on every later write', async () => {
    for (const [key, task] of Object.entries(TASKS)) {
      await admin.query(`INSERT INTO ${schema}.tasks (map, key, value) VALUES ('app.tasks', $1, $2)`, [key, JSON.stringify(task)]);
    }
    // The inserts told their pending and running tasks (migration 3's trigger): 3 of the 4.
    await eventually('the inserts\' notifications', () => heard.length === 3);
    const before = (await admin.query(`SELECT key, ${FIELDS} FROM ${schema}.tasks ORDER BY key`)).rows;
    expect(before.find((row) => row.key === 'running')).toMatchObject({ state: 'running', claim_epoch: 12, claim_expires: 1_764_000_005_000 });

    const client = await admin.connect();
    try {
      expect(await migrate(client, schema, channel)).toBe(4);
    } finally {
      client.release();
    }
    expect((await admin.query(`SELECT version FROM ${schema}.schema_version`)).rows[0].version).toBe(SCHEMA_VERSION);
    expect((await fields()).map(({ doc_matches: matches, ...row }) => [row, matches])).toEqual(before.map((row) => [row, true]));

    // A write of anyone's updates the fields; the first notification after the migration is that write's own.
    const claimed = { ...TASKS.pending, state: 'running', claim: { epoch: 13, expiresAt: 1_764_000_010_000, node: 'n-2' } };
    await admin.query(`UPDATE ${schema}.tasks SET value = $1 WHERE key = 'pending'`, [JSON.stringify(claimed)]);
    const told = () => heard.map((payload) => JSON.parse(payload) as { k: string; v?: string; f?: { claim?: { epoch?: number } } });
    await eventually('the claim\'s notification', () => told().some((n) => n.f?.claim?.epoch === 13));
    // Notifications come in commit order: any the migration sent would be before this one.
    expect(told().map((n) => n.k)).toEqual([...told().slice(0, 3).map((n) => n.k), 'pending']);
    // Migration 7: a claim is told by the claim alone, not the task's value.
    expect(told().at(-1)).toEqual({ m: 'app.tasks', k: 'pending', f: { claim: { epoch: 13, expiresAt: 1_764_000_010_000, node: 'n-2' } } });
    expect((await fields()).find((row) => row.key === 'pending')).toMatchObject({ state: 'running', claim_epoch: 13, claim_expires: 1_764_000_010_000, doc_matches: true });

    // Under session_replication_role = replica (a logical replica's apply, a restore) too.
    await admin.query(`BEGIN; SET LOCAL session_replication_role = replica; INSERT INTO ${schema}.tasks (map, key, value) VALUES ('app.tasks', 'replayed', $1); COMMIT`.replace('$1', `'${JSON.stringify({ ...TASKS.pending, id: 'replayed', seq: 9 })}'`));
    expect((await fields()).find((row) => row.key === 'replayed')).toMatchObject({ type: 'mail', state: 'pending', seq: 9, doc_matches: true });

    // The claim index answers the pending tasks in claim order.
    const pending = await admin.query(`SELECT key FROM ${schema}.tasks WHERE map = 'app.tasks' AND type = 'mail' AND state = 'pending' ORDER BY priority DESC, seq, key COLLATE "C"`);
    expect(pending.rows.map((row) => row.key)).toEqual(['replayed', 'due']); // priority 5 first, then 0
  });
});
