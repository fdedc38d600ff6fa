import { InvalidScheduleError } from './errors/invalid-schedule.error';
import type { ScheduleDefinitionInput } from './schedule-definition';

/*
 * Operators' edits of runtime schedules as they arrive (a path and a JSON body, a query string, a command line):
 * checked here for the admin API and the CLI alike, before the catalog validates the definition itself.
 */

/**
 * An edit's `expectedRevision` as text (`?expectedRevision=`, `--expected-revision`) or a number (a JSON body):
 * a whole number, 0 or more (`0`: the schedule must not exist yet); `undefined` when not given.
 */
export function parseExpectedRevision(id: string, value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  const revision = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 0) {
    throw new InvalidScheduleError(id, 'expectedRevision', `must be a whole number, 0 or more (the revision the edit is based on), got ${JSON.stringify(value) ?? String(value)}`);
  }
  return revision;
}

/**
 * The body of `PUT schedules/{id}`: a schedule definition whose `id`, when given, is the path's, and may carry
 * `expectedRevision` (else taken from the query). Throws {@link InvalidScheduleError} naming the field.
 */
export function parseScheduleBody(id: string, body: unknown, queryRevision?: unknown): { input: ScheduleDefinitionInput; expectedRevision?: number } {
  if (body === null || body === undefined || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidScheduleError(id, 'definition', `the body must be a JSON object (a schedule definition), got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}`);
  }
  const { expectedRevision: bodyRevision, ...fields } = body as Record<string, unknown>;
  if (fields.id !== undefined && fields.id !== id) {
    throw new InvalidScheduleError(id, 'id', `the body's id ${JSON.stringify(fields.id)} is not the path's "${id}" (leave it out, or make them equal)`);
  }
  const fromBody = parseExpectedRevision(id, bodyRevision);
  const fromQuery = parseExpectedRevision(id, queryRevision);
  if (fromBody !== undefined && fromQuery !== undefined && fromBody !== fromQuery) {
    throw new InvalidScheduleError(id, 'expectedRevision', `given twice with different values (body ${fromBody}, query ${fromQuery})`);
  }
  const expectedRevision = fromBody ?? fromQuery;
  return { input: { ...fields, id } as unknown as ScheduleDefinitionInput, ...(expectedRevision !== undefined && { expectedRevision }) };
}
