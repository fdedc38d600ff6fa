import { z } from 'zod';
import { omittable, wholeNumberInput } from '../core/input-fields';
import { parseInput, type InputErrorFactory } from '../core/input-schema';
import type { ScheduleDefinitionInput } from './schedule-definition';
import { invalidSchedule } from './errors/schedule.errors';

/*
 * Operators' edits of runtime schedules as they arrive (a path and a JSON body, a query string, a command line):
 * checked here for the admin API and the CLI alike, before the catalog validates the definition itself.
 */

const EXPECTED_REVISION = omittable(wholeNumberInput(
  { min: 0 },
  (given) => `must be a whole number, 0 or more (the revision the edit is based on), got ${JSON.stringify(given) ?? String(given)}`,
));

/**
 * Fields are the definition's to check (the catalog does, key by key): here only that the body is an object. The
 * body is handed on as sent, not as parsed: zod leaves out a `__proto__` key, which the catalog must see to refuse.
 */
const SCHEDULE_BODY = z.looseObject({}, {
  error: ({ input }) => `the body must be a JSON object (a schedule definition), got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}`,
});

/** The schedule's error for a bad field. */
const scheduleError = (id: string): InputErrorFactory => (field, reason) => invalidSchedule(id, field, reason);

/**
 * An edit's `expectedRevision` as text (`?expectedRevision=`, `--expected-revision`) or a number (a JSON body):
 * a whole number, 0 or more (`0`: the schedule must not exist yet); `undefined` when not given.
 */
export function parseExpectedRevision(id: string, value: unknown): number | undefined {
  return parseInput(EXPECTED_REVISION, value, scheduleError(id), { field: 'expectedRevision' });
}

/**
 * The body of `PUT schedules/{id}`: a schedule definition whose `id`, when given, is the path's, and may carry
 * `expectedRevision` (else taken from the query). Throws {@link InvalidInputError} naming the field.
 */
export function parseScheduleBody(id: string, body: unknown, queryRevision?: unknown): { input: ScheduleDefinitionInput; expectedRevision?: number } {
  parseInput(SCHEDULE_BODY, body, scheduleError(id), { field: 'definition' });
  const { expectedRevision: bodyRevision, ...fields } = body as Record<string, unknown>;
  if (fields.id !== undefined && fields.id !== id) {
    throw invalidSchedule(id, 'id', `the body's id ${JSON.stringify(fields.id)} is not the path's "${id}" (leave it out, or make them equal)`);
  }
  const fromBody = parseExpectedRevision(id, bodyRevision);
  const fromQuery = parseExpectedRevision(id, queryRevision);
  if (fromBody !== undefined && fromQuery !== undefined && fromBody !== fromQuery) {
    throw invalidSchedule(id, 'expectedRevision', `given twice with different values (body ${fromBody}, query ${fromQuery})`);
  }
  const expectedRevision = fromBody ?? fromQuery;
  return { input: { ...fields, id } as unknown as ScheduleDefinitionInput, ...(expectedRevision !== undefined && { expectedRevision }) };
}
