import type { PoolClient } from 'pg';
import { GatekeeperError } from '../../core/errors/gatekeeper.error';
import { ident, literal } from './postgres-sql';
import { taskDocMigration, taskIndexes } from './tasks/postgres-task-doc.migration';
import { taskPlanMigration } from './tasks/postgres-task-plans.migration';
import { taskClaimsMigration } from './tasks/postgres-task-claims.migration';
import { taskWritesMigration } from './tasks/postgres-task-writes.migration';

/** The schema version this build of the library writes and reads. */
export const SCHEMA_VERSION = 8;

/**
 * The transaction-local setting by which a statement of the library says its `DELETE` is the library's own: the guard
 * triggers (migration 4) refuse every other `DELETE` and `TRUNCATE` of the library's tables. A library statement sets
 * it in its own `WHERE` (see {@link OWN_REMOVAL}), so it takes no round trip of its own and holds only to the end of
 * that statement's transaction.
 */
export const REMOVING = 'nestjs_gatekeeper.removing';

/**
 * A condition a library `DELETE` adds to its `WHERE`: true, having set {@link REMOVING} first. It is evaluated for every
 * row before that row is deleted (a row is deleted only once its whole condition held), so the guard trigger, which
 * runs as each row is deleted, always finds it set.
 */
export const OWN_REMOVAL = `set_config('${REMOVING}', 'on', true) = 'on'`;

/** The tables the guard triggers keep: everything whose rows a removal from outside could turn into two holders. */
const GUARDED = ['records', 'tasks', 'counters', 'lost_marks', 'incarnation', 'forget_on_restore'] as const;

/**
 * The library's tables, in a schema of its own. A migration is applied once, in order, inside the transaction that
 * holds the schema's advisory lock, and never edited once released: a change is a new version.
 *
 * - `records`: every record map's records (`map` is `<prefix>.<name>`), their exact text, a `jsonb` copy for maps with
 *   indexes (`doc`, so `findBy` runs on an index), and the time after which a record with a TTL counts as gone.
 * - `counters`: counters that never go back, one row each.
 * - `lost_marks`: records marked lost (`markLost`), by map and key, with the value a restore dropped (migration 2).
 * - A trigger tells every change of `records` on the schema's channel (`NOTIFY`), in commit order: writes by any
 *   client, operators' SQL included.
 * - `incarnation`: which database the library's state is in (see {@link checkIncarnation}), and since when it may have
 *   lost acknowledged writes; `forget_on_restore`: the maps whose records a restore drops (`forgetOnRestore`).
 * - `tasks` (migration 3): the tasks' records, with the columns of `records` (so the same statements write them) and
 *   the fields claims are found by taken from each value as generated columns, under partial indexes that hand out
 *   the first tasks in claim order however long the backlog. Its trigger tells only what a node acts on: a task that
 *   became pending, and a new claim (not a renewal, not a completion). From migration 5 on, a trigger keeps `doc`
 *   (the value parsed once per write) and the fields are generated from it. Migration 6 drops the listing index
 *   by type, which a claim query took instead of the claim-order index on a table its statistics did not know.
 *   Migration 8 adds `create_tasks` and `replace_tasks`, the task store's batched writes with their plans kept.
 * - Guard triggers (migration 4) on every table above refuse a `DELETE` or `TRUNCATE` that is not the library's own
 *   (see {@link REMOVING}): an absent record is never taken for one that never existed while a lease under it could
 *   still vouch, and a removal from outside leaves nothing to tell it by (the records saying a semaphore ever existed
 *   go with it). The error tells the operator what to do instead. They fire whatever `session_replication_role` says
 *   (`ENABLE ALWAYS`); only their owner can disable them, or drop the schema.
 */
function migrations(schema: string, channel: string): ReadonlyArray<readonly string[]> {
  const s = ident(schema);
  return [
    // 1: records, counters, lost marks, the change trigger.
    [
      `CREATE TABLE ${s}.records (
        map text NOT NULL,
        key text NOT NULL,
        value text NOT NULL,
        doc jsonb,
        expires_at timestamptz,
        PRIMARY KEY (map, key)
      )`,
      `CREATE INDEX records_expiring ON ${s}.records (expires_at) WHERE expires_at IS NOT NULL`,
      `CREATE TABLE ${s}.counters (name text PRIMARY KEY, value bigint NOT NULL)`,
      `CREATE TABLE ${s}.lost_marks (map text NOT NULL, key text NOT NULL, at bigint NOT NULL, PRIMARY KEY (map, key))`,
      `CREATE FUNCTION ${s}.tell_change() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE payload text;
        BEGIN
          IF TG_OP = 'DELETE' THEN
            payload := json_build_object('m', OLD.map, 'k', OLD.key)::text;
          ELSE
            payload := json_build_object('m', NEW.map, 'k', NEW.key, 'v', NEW.value)::text;
            -- NOTIFY takes at most 8000 bytes: a larger value is told by key, and read.
            IF octet_length(payload) > 7900 THEN
              payload := json_build_object('m', NEW.map, 'k', NEW.key, 'r', true)::text;
            END IF;
          END IF;
          PERFORM pg_notify(${literal(channel)}, payload);
          RETURN NULL;
        END $$`,
      `CREATE TRIGGER records_changed AFTER INSERT OR UPDATE OR DELETE ON ${s}.records FOR EACH ROW EXECUTE FUNCTION ${s}.tell_change()`,
      `CREATE FUNCTION ${s}.tell_cleared() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_notify(${literal(channel)}, '{"c":true}');
          RETURN NULL;
        END $$`,
      `CREATE TRIGGER records_cleared AFTER TRUNCATE ON ${s}.records FOR EACH STATEMENT EXECUTE FUNCTION ${s}.tell_cleared()`,
    ],
    // 2: the incarnation, to tell a restore from an older state or a failover that missed writes.
    [
      // The server's system identifier (a new cluster: a restore into a fresh server), its WAL timeline (a promoted
      // replica, a point-in-time recovery) and the records table's oid (a logical restore into the same server).
      `CREATE FUNCTION ${s}.current_incarnation() RETURNS text LANGUAGE sql VOLATILE AS $$
        SELECT (SELECT system_identifier FROM pg_control_system())::text
          || '/' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)
          || '/' || ${literal(`${s}.records`)}::regclass::oid::text
      $$`,
      `CREATE TABLE ${s}.incarnation (id int PRIMARY KEY CHECK (id = 1), identity text NOT NULL, lost_at bigint)`,
      `INSERT INTO ${s}.incarnation (id, identity) VALUES (1, ${s}.current_incarnation())`,
      `CREATE TABLE ${s}.forget_on_restore (map text PRIMARY KEY)`,
      // What a restore dropped under a key: its capability rebuilds from it when no node remembers better.
      `ALTER TABLE ${s}.lost_marks ADD COLUMN value text`,
      // Run before anything else on each new connection, and every few seconds: when the database is not the one the
      // state was written in, drops the records of the maps that forget theirs (marking each lost), takes every
      // counter past anything it can have handed out, and dates the loss; all in the statement's one transaction, the
      // incarnation's row locked, so one caller handles a restore and every other one waits for it and sees it.
      checkIncarnationFunction(s, 'CREATE', false),
      // A counter's next value, the database's incarnation checked first in the same transaction: a counter never
      // hands out a value again from a restored row.
      `CREATE FUNCTION ${s}.next_counter(counter text, at_least bigint, now_ms bigint, OUT next bigint, OUT lost_at bigint, OUT forgotten text[])
        LANGUAGE plpgsql AS $$
        BEGIN
          SELECT c.lost_at, c.forgotten INTO next_counter.lost_at, next_counter.forgotten FROM ${s}.check_incarnation(now_ms) c;
          INSERT INTO ${s}.counters AS k (name, value) VALUES (counter, GREATEST(at_least, coalesce(next_counter.lost_at * 1000, 1)))
          ON CONFLICT (name) DO UPDATE SET value = GREATEST(k.value + 1, at_least)
          RETURNING k.value INTO next;
        END $$`,
    ],
    // 3: the tasks' own table.
    [
      `CREATE TABLE ${s}.tasks (
        map text NOT NULL,
        key text NOT NULL,
        value text NOT NULL,
        doc jsonb,
        expires_at timestamptz,
        type text GENERATED ALWAYS AS ((value::jsonb) ->> 'type') STORED,
        state text GENERATED ALWAYS AS ((value::jsonb) ->> 'state') STORED,
        priority float8 GENERATED ALWAYS AS (((value::jsonb) ->> 'priority')::float8) STORED,
        seq float8 GENERATED ALWAYS AS (((value::jsonb) ->> 'seq')::float8) STORED,
        not_before float8 GENERATED ALWAYS AS (((value::jsonb) ->> 'notBefore')::float8) STORED,
        claim_epoch float8 GENERATED ALWAYS AS (((value::jsonb) -> 'claim' ->> 'epoch')::float8) STORED,
        claim_expires float8 GENERATED ALWAYS AS (((value::jsonb) -> 'claim' ->> 'expiresAt')::float8) STORED,
        finished_at float8 GENERATED ALWAYS AS (((value::jsonb) ->> 'finishedAt')::float8) STORED,
        uncounted boolean GENERATED ALWAYS AS (coalesce(((value::jsonb) ->> 'uncounted')::boolean, false)) STORED,
        group_name text GENERATED ALWAYS AS ((value::jsonb) -> 'group' ->> 'name') STORED,
        PRIMARY KEY (map, key)
      )`,
      ...taskIndexes(s),
      `CREATE FUNCTION ${s}.tell_task() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE payload text;
        BEGIN
          IF NEW.state = 'pending' OR (NEW.state = 'running' AND (TG_OP = 'INSERT' OR OLD.state <> 'running' OR OLD.claim_epoch IS DISTINCT FROM NEW.claim_epoch)) THEN
            payload := json_build_object('m', NEW.map, 'k', NEW.key, 'v', NEW.value)::text;
            IF octet_length(payload) > 7900 THEN
              payload := json_build_object('m', NEW.map, 'k', NEW.key, 'r', true)::text;
            END IF;
            PERFORM pg_notify(${literal(channel)}, payload);
          END IF;
          RETURN NULL;
        END $$`,
      `CREATE TRIGGER tasks_changed AFTER INSERT OR UPDATE ON ${s}.tasks FOR EACH ROW EXECUTE FUNCTION ${s}.tell_task()`,
      `CREATE TRIGGER tasks_cleared AFTER TRUNCATE ON ${s}.tasks FOR EACH STATEMENT EXECUTE FUNCTION ${s}.tell_cleared()`,
    ],
    // 4: no removal of the library's rows but its own.
    [
      `CREATE FUNCTION ${s}.refuse_removal() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF current_setting(${literal(REMOVING)}, true) = 'on' THEN
            RETURN OLD;
          END IF;
          RAISE EXCEPTION USING
            ERRCODE = 'restrict_violation',
            MESSAGE = format('nestjs-gatekeeper: %s on %I.%I refused: only nestjs-gatekeeper removes its rows', TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME),
            DETAIL = 'A permit removed while its holder still runs under it would be granted to a second holder at once: nothing '
              || 'left would say it had existed. Runtime schedules, history, tasks, counters and lost marks are refused for the same reason.',
            HINT = 'To stop a job: npx nestjs-gatekeeper --backend postgres --pg-url <url> pause <name>. To take a permit away: '
              || '... release <name> <token> (its holder is told first). To remove a definition: ... remove <name>. '
              || 'To start over from nothing: stop every node, then DROP SCHEMA ' || quote_ident(TG_TABLE_SCHEMA) || ' CASCADE.';
        END $$`,
      ...GUARDED.flatMap((table) => [
        `CREATE TRIGGER ${table}_refuse_delete BEFORE DELETE ON ${s}.${table} FOR EACH ROW EXECUTE FUNCTION ${s}.refuse_removal()`,
        `CREATE TRIGGER ${table}_refuse_truncate BEFORE TRUNCATE ON ${s}.${table} FOR EACH STATEMENT EXECUTE FUNCTION ${s}.refuse_removal()`,
        `ALTER TABLE ${s}.${table} ENABLE ALWAYS TRIGGER ${table}_refuse_delete`,
        `ALTER TABLE ${s}.${table} ENABLE ALWAYS TRIGGER ${table}_refuse_truncate`,
      ]),
      // Its own drop of a restored state's leases, let through.
      checkIncarnationFunction(s, 'CREATE OR REPLACE', true),
    ],
    // 5: each task's value parsed once per write, its fields generated from that.
    taskDocMigration(s),
    // 6: no index a claim query could take instead of the claim-order ones, whatever the statistics say.
    taskPlanMigration(s),
    // 7: a new claim told by the claim alone, not the task's whole value.
    taskClaimsMigration(s, literal(channel)),
    // 8: the batched compare-and-sets of tasks as functions, their plans made once per connection.
    taskWritesMigration(s),
  ];
}

/**
 * The text of `check_incarnation` (see migration 2), after `verb` (`CREATE` or `CREATE OR REPLACE`). From migration 4
 * on (`removes`), its drop of a restored state's leases says it is the library's own removal, which the guard triggers
 * let through (see {@link REMOVING}).
 */
function checkIncarnationFunction(s: string, verb: 'CREATE' | 'CREATE OR REPLACE', removes: boolean): string {
  return `${verb} FUNCTION ${s}.check_incarnation(now_ms bigint, OUT lost_at bigint, OUT forgotten text[], OUT records_oid bigint) LANGUAGE plpgsql AS $$
        DECLARE
          known ${s}.incarnation%ROWTYPE;
          here text := ${s}.current_incarnation();
        BEGIN
          records_oid := ${literal(`${s}.records`)}::regclass::oid::bigint;
          SELECT * INTO known FROM ${s}.incarnation WHERE id = 1;
          IF known.identity = here THEN
            lost_at := known.lost_at;
            RETURN;
          END IF;
          -- A missing row (deleted by hand) counts as another database; made first, so the lock below has a row to take.
          INSERT INTO ${s}.incarnation (id, identity) VALUES (1, 'missing') ON CONFLICT (id) DO NOTHING;
          SELECT * INTO known FROM ${s}.incarnation WHERE id = 1 FOR UPDATE;
          IF known.identity = here THEN
            lost_at := known.lost_at;
            RETURN;
          END IF;
          lost_at := GREATEST(coalesce(known.lost_at, 0), now_ms);
${removes ? `          PERFORM set_config('${REMOVING}', 'on', true);\n` : ''}          WITH gone AS (
            DELETE FROM ${s}.records WHERE map IN (SELECT map FROM ${s}.forget_on_restore) RETURNING map, key, value
          ), marked AS (
            INSERT INTO ${s}.lost_marks AS l (map, key, at, value) SELECT map, key, lost_at, value FROM gone
            ON CONFLICT (map, key) DO UPDATE SET at = GREATEST(l.at, EXCLUDED.at), value = EXCLUDED.value
            RETURNING map || ' ' || key AS what
          )
          SELECT coalesce(array_agg(what ORDER BY what), '{}') INTO forgotten FROM marked;
          UPDATE ${s}.counters SET value = GREATEST(value, lost_at * 1000);
          UPDATE ${s}.incarnation SET identity = here, lost_at = check_incarnation.lost_at WHERE id = 1;
        END $$`;
}

/** Thrown when the database holds a schema a newer version of the library wrote. */
export class SchemaTooNewError extends GatekeeperError {}

/**
 * Brings `schema` to {@link SCHEMA_VERSION} (or `upTo`: the tests of a migration start from the version before it) on
 * `client` (a connection of its own): in one transaction holding the schema's advisory lock, so nodes starting together
 * apply each migration once. Refuses a schema newer than this build knows. Returns the version found before.
 */
export async function migrate(client: PoolClient, schema: string, channel: string, upTo = SCHEMA_VERSION): Promise<number> {
  const s = ident(schema);
  await client.query('BEGIN');
  try {
    // Waiting for another node's migration may take longer than a statement may.
    await client.query('SET LOCAL statement_timeout = 0');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`nestjs-gatekeeper:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.schema_version (id int PRIMARY KEY CHECK (id = 1), version int NOT NULL)`);
    const found = await client.query<{ version: number }>(`SELECT version FROM ${s}.schema_version WHERE id = 1`);
    const before = found.rows[0]?.version ?? 0;
    if (before > SCHEMA_VERSION) {
      throw new SchemaTooNewError(
        `PostgreSQL schema "${schema}" is at version ${before}, newer than this version of nestjs-gatekeeper knows (${SCHEMA_VERSION}): upgrade the library, or give it a schema of its own`,
      );
    }
    const all = migrations(schema, channel);
    for (let version = before + 1; version <= upTo; version++) {
      for (const statement of all[version - 1]) await client.query(statement);
    }
    if (before < upTo) {
      await client.query(`INSERT INTO ${s}.schema_version (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version`, [upTo]);
    }
    await client.query('COMMIT');
    return before;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Deletes up to 1,000 records of `schema` past their TTL. The expiry is checked again on the row deleted: a record
 * renewed (re-created, put) while the delete waited for its lock is left alone whatever plan runs the delete. (Picked
 * by key instead of `ctid`, without that check, the delete takes the renewed record with it: the test shows it.)
 */
export function sweepExpired(schema: string): string {
  const s = ident(schema);
  return `DELETE FROM ${s}.records WHERE ctid IN (SELECT ctid FROM ${s}.records WHERE expires_at <= clock_timestamp() LIMIT 1000) `
    + `AND expires_at <= clock_timestamp() AND ${OWN_REMOVAL}`;
}

/** The database's clock in epoch ms, as SQL: what loss marks and counters are stamped with, as permits are timed by it. */
export const DATABASE_NOW_MS = 'floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/**
 * The call that checks which database the state is in (`check_incarnation`, migration 2) in the schema `quoted`
 * (already an identifier), on the database's clock, named `c`: a row of `lost_at`, since when the state may
 * have lost acknowledged writes (`null`: never), `forgotten`, the records this call dropped (`<map> <key>`; `null`
 * unless this call found the restore), and `records_oid`, the oid of the `records` table it checked (a logical restore
 * makes the table anew: a row read with another `tableoid` is from a database not checked yet).
 */
export function checkIncarnation(quoted: string): string {
  return `${quoted}.check_incarnation(${DATABASE_NOW_MS}) c`;
}

/** The columns of {@link checkIncarnation}'s row (as `c`) that `PostgresIncarnation.observe` takes. */
export const INCARNATION_COLUMNS = 'c.lost_at, c.forgotten, c.records_oid';
