/**
 * Migration 7 of the schema `s` (quoted), its notifications on `channel` (its literal): a new claim is told by the
 * claim alone, `{ m, k, f: { claim } }`, no longer with the task's whole value.
 *
 * Every claim was sent to every listening node with the task's value (its data and its attempts, JSON-escaped once
 * more into the payload), and each node parsed it twice to learn one thing: who claimed the task, under which epoch
 * (`TaskClaims.heardClaim`). On a one-slot worker at a backlog that was a fifth of the task's cycle (0.94 → 0.74 ms
 * with claims not told at all, in a run of bench/pg-tasks.ts's backlog row by hand). A task that becomes pending is
 * told with its value as before: a node claims it from that. A node of an earlier version hears the new claim
 * payload as no news (it has no value): it only races for the task a moment longer, and loses the compare.
 */
export function taskClaimsMigration(s: string, channel: string): string[] {
  return [
    `CREATE OR REPLACE FUNCTION ${s}.tell_task() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE payload text;
        BEGIN
          IF NEW.state = 'pending' THEN
            payload := json_build_object('m', NEW.map, 'k', NEW.key, 'v', NEW.value)::text;
            IF octet_length(payload) > 7900 THEN
              payload := json_build_object('m', NEW.map, 'k', NEW.key, 'r', true)::text;
            END IF;
            PERFORM pg_notify(${channel}, payload);
          ELSIF NEW.state = 'running' AND (TG_OP = 'INSERT' OR OLD.state <> 'running' OR OLD.claim_epoch IS DISTINCT FROM NEW.claim_epoch) THEN
            PERFORM pg_notify(${channel}, json_build_object('m', NEW.map, 'k', NEW.key, 'f', json_build_object('claim', NEW.doc -> 'claim'))::text);
          END IF;
          RETURN NULL;
        END $$`,
  ];
}
