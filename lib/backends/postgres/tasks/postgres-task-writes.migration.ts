/**
 * Migration 8 of the schema `s` (quoted): the task store's batched compare-and-sets as two functions of the schema,
 * `create_tasks` and `replace_tasks`, each a loop of one-row statements on the primary key whose plans PL/pgSQL keeps
 * for the connection (`plan_cache_mode = force_generic_plan`: a plan made once, never again per call).
 *
 * As one statement (`INSERT … SELECT … FROM unnest(…)`, `UPDATE … FROM unnest(…)`), every batch was planned afresh:
 * `EXPLAIN ANALYZE` of a one-row compare-and-set planned for 0.14–0.18 ms and ran for 0.2–0.25 ms, so planning was
 * about 40 % of the server's time per write. Kept plans for those statements were tried and dropped: with the join
 * over `unnest` the planner chose a generic plan that was worse (1,260 tasks/s at one worker against 2,213–2,684).
 * A statement on the whole primary key has one sensible plan, whatever the table's statistics say, so its plan can be
 * made once. Measured by hand on 3,000 tasks, one connection, batches of two: 0.58–0.67 ms a batch as one statement,
 * 0.33–0.43 ms through the function.
 *
 * What each writes is what the statements wrote: a create lands unless the key exists; a replace lands only on a row
 * whose stored text is still the one its writer read, and a row another transaction holds (a claim of the same task
 * in flight) counts as changed at once (`FOR UPDATE SKIP LOCKED`), never waited for.
 */
export function taskWritesMigration(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.create_tasks(m text, keys text[], nexts text[]) RETURNS SETOF text
      LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
      BEGIN
        FOR i IN 1 .. coalesce(array_length(keys, 1), 0) LOOP
          INSERT INTO ${s}.tasks (map, key, value) VALUES (m, keys[i], nexts[i]) ON CONFLICT (map, key) DO NOTHING;
          IF FOUND THEN
            RETURN NEXT keys[i];
          END IF;
        END LOOP;
      END $$`,
    `CREATE FUNCTION ${s}.replace_tasks(m text, keys text[], expected text[], nexts text[]) RETURNS SETOF text
      LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
      BEGIN
        FOR i IN 1 .. coalesce(array_length(keys, 1), 0) LOOP
          PERFORM FROM ${s}.tasks WHERE map = m AND key = keys[i] AND value = expected[i] FOR UPDATE SKIP LOCKED;
          IF FOUND THEN
            UPDATE ${s}.tasks SET value = nexts[i] WHERE map = m AND key = keys[i];
            RETURN NEXT keys[i];
          END IF;
        END LOOP;
      END $$`,
  ];
}
