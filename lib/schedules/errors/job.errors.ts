import { InvalidInputError } from '../../core/errors/invalid-input.error';
import { NotFoundError } from '../../core/errors/not-found.error';

/**
 * No job of this name: no `@ClusterSingleton` or `@LeaderOnly` method or runtime schedule on this node has it (`known`
 * lists those it has), and the cluster keeps no history of it.
 */
export function unknownJob(job: string, known: readonly string[]): NotFoundError {
  const has = known.length > 0 ? `; this node has ${known.slice(0, 10).join(', ')}${known.length > 10 ? ', ...' : ''}` : '';
  return new NotFoundError('job', job, `No job "${job}" (jobs are named Class.method, a runtime schedule's id, or leader:<election>:<Class.method>${has})`, known);
}

/** An operator's request about a job has a bad field (`limit` of a history, `timeout` of a run now, a body's key). */
export function invalidJobRequest(job: string, field: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Job "${job}": invalid ${field}: ${reason}`, { of: `Job "${job}"`, field, reason, kind: 'job', id: job });
}
