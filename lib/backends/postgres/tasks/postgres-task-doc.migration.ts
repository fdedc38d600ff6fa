/**
 * The fields claims are found by, as migration 5 keeps them: each a generated column read from `doc`, the task's value
 * parsed once per write, where migration 3 parsed the value again for every column (ten parses of the same text per
 * row written). Measured on a table of the tasks' shape and indexes, 700-byte values, one connection: 225–295 µs of
 * the server's CPU per `UPDATE` with a parse per column, 175–200 µs with one parse in a trigger.
 */
const FIELDS: ReadonlyArray<readonly [column: string, sql: string]> = [
  ['type', `text GENERATED ALWAYS AS (doc ->> 'type') STORED`],
  ['state', `text GENERATED ALWAYS AS (doc ->> 'state') STORED`],
  ['priority', `float8 GENERATED ALWAYS AS ((doc ->> 'priority')::float8) STORED`],
  ['seq', `float8 GENERATED ALWAYS AS ((doc ->> 'seq')::float8) STORED`],
  ['not_before', `float8 GENERATED ALWAYS AS ((doc ->> 'notBefore')::float8) STORED`],
  ['claim_epoch', `float8 GENERATED ALWAYS AS ((doc -> 'claim' ->> 'epoch')::float8) STORED`],
  ['claim_expires', `float8 GENERATED ALWAYS AS ((doc -> 'claim' ->> 'expiresAt')::float8) STORED`],
  ['finished_at', `float8 GENERATED ALWAYS AS ((doc ->> 'finishedAt')::float8) STORED`],
  ['uncounted', `boolean GENERATED ALWAYS AS (coalesce((doc ->> 'uncounted')::boolean, false)) STORED`],
  ['group_name', `text GENERATED ALWAYS AS (doc -> 'group' ->> 'name') STORED`],
];

/**
 * Migration 5 of the schema `s` (quoted): a `BEFORE` trigger sets `doc` from `value` on every insert and update, whoever
 * writes (it fires under any `session_replication_role`); the existing rows get theirs by a rewrite of the column, which
 * fires no trigger (no `NOTIFY` for every pending task); the fields are generated from `doc` again, and their indexes
 * (dropped with the old columns) made anew ({@link taskIndexes}).
 */
export function taskDocMigration(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.task_doc() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.doc := NEW.value::jsonb;
        RETURN NEW;
      END $$`,
    `CREATE TRIGGER tasks_doc BEFORE INSERT OR UPDATE ON ${s}.tasks FOR EACH ROW EXECUTE FUNCTION ${s}.task_doc()`,
    `ALTER TABLE ${s}.tasks ENABLE ALWAYS TRIGGER tasks_doc`,
    `ALTER TABLE ${s}.tasks ALTER COLUMN doc TYPE jsonb USING value::jsonb`,
    `ALTER TABLE ${s}.tasks ${FIELDS.map(([column]) => `DROP COLUMN ${column}`).join(', ')}`,
    `ALTER TABLE ${s}.tasks ${FIELDS.map(([column, sql]) => `ADD COLUMN ${column} ${sql}`).join(', ')}`,
    ...taskIndexes(s),
  ];
}

/**
 * The indexes of the tasks table (schema `s`, quoted), as migration 3 created them and migration 5 makes them again
 * after its columns: per state, claim order within a type, so the first due tasks are an index's first rows.
 */
export function taskIndexes(s: string): string[] {
  return [
    `CREATE INDEX tasks_pending ON ${s}.tasks (map, type, priority DESC, seq, key COLLATE "C") WHERE state = 'pending'`,
    `CREATE INDEX tasks_running ON ${s}.tasks (map, type, claim_expires) WHERE state = 'running'`,
    `CREATE INDEX tasks_uncounted ON ${s}.tasks (map, type) WHERE uncounted`,
    `CREATE INDEX tasks_finished ON ${s}.tasks (map, finished_at) WHERE state IN ('done', 'failed', 'invalid', 'cancelled')`,
    `CREATE INDEX tasks_by_type ON ${s}.tasks (map, type, state)`,
    `CREATE INDEX tasks_by_group ON ${s}.tasks (map, group_name) WHERE group_name IS NOT NULL`,
  ];
}
