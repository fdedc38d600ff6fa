/**
 * The run history names a `@LeaderOnly` method `leader:<election>:<Class.method>`. No cron job can take such a name
 * (a class name has no colon) and runtime schedule ids may not start with the prefix, so the names never meet.
 */
export const LEADER_JOB_PREFIX = 'leader:';

/** The history's name for the `@LeaderOnly` method `where` (`Class.method`) of `election`. */
export function leaderJobName(election: string, where: string): string {
  return `${LEADER_JOB_PREFIX}${election}:${where}`;
}
