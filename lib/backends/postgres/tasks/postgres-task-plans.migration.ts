/**
 * Migration 6 of the schema `s` (quoted): no index that a claim query could take instead of the claim-order ones.
 *
 * The listing index `tasks_by_type` was on `(map, type, state)`. A claim query names all three, so on a table whose
 * statistics did not know its backlog (a queue filled in the minute since it was made, before autovacuum first
 * analyzed it, or one analyzed while nearly empty), the planner expected a row or two, found that index as good as
 * the claim-order one, read every pending task of the type and sorted them: 50 ms a query at 100,000 tasks, where the
 * claim-order index (`tasks_pending`) reads the batch alone (0.6 ms). The one query it served alone, an operator's
 * listing of a type's tasks in every state, now reads the table, as a listing of every task does; a listing by state
 * has the partial indexes, one by group its own.
 */
export function taskPlanMigration(s: string): string[] {
  return [`DROP INDEX ${s}.tasks_by_type`];
}
