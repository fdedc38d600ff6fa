import { z } from 'zod';
import { parseInput, withReason } from '../../lib/core/input-schema';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';
import { invalidTaskQuery } from '../../lib/tasks/errors/task.errors';

/** The error a caller would build, so the spec reads the field and the reason as an operator gets them. */
const toError = (field: string, reason: string) => invalidTaskQuery(field, reason);

function failure(run: () => unknown): InvalidInputError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidInputError) return error;
    throw error;
  }
  throw new Error('expected an InvalidInputError');
}

describe('parseInput', () => {
  const request = z.strictObject(
    {
      limit: z.int({ error: 'must be a whole number' }).optional(),
      filter: z.object({ group: z.string({ error: ({ input }) => `must be a group name, got ${JSON.stringify(input)}` }) }).optional(),
      states: z.array(z.enum(['done', 'failed'], { error: ({ input }) => `"${String(input)}" is not a finished state` })).optional(),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? 'is not an option' : 'must be an object') },
  );

  it('answers the output when the input is valid', () => {
    expect(parseInput(request, { limit: 5, states: ['done'] }, toError)).toEqual({ limit: 5, states: ['done'] });
  });

  it("throws the caller's error naming the field with the schema's message, kept as written", () => {
    const error = failure(() => parseInput(request, { limit: 1.5 }, toError));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect([error.field, error.reason, error.message]).toEqual(['limit', 'must be a whole number', 'Task query: invalid limit: must be a whole number']);
  });

  it('names a nested field by its dotted path, and an item of a list by its list', () => {
    expect(failure(() => parseInput(request, { filter: { group: 5 } }, toError))).toMatchObject({ field: 'filter.group', reason: 'must be a group name, got 5' });
    expect(failure(() => parseInput(request, { states: ['done', 'stuck', 'lost'] }, toError))).toMatchObject({ field: 'states', reason: '"stuck" is not a finished state' });
  });

  it('names the first unknown key, ahead of any other bad field', () => {
    expect(failure(() => parseInput(request, { limt: 5, olderThan: 1 }, toError))).toMatchObject({ field: 'limt', reason: 'is not an option' });
    // The schema checks its own keys first, but a misspelt key is what the operator has to fix.
    expect(failure(() => parseInput(request, { limit: 'x', dryrun: true }, toError))).toMatchObject({ field: 'dryrun', reason: 'is not an option' });
    expect(failure(() => parseInput(request, JSON.parse('{"__proto__": {"limit": 1}}'), toError))).toMatchObject({ field: '__proto__' });
  });

  it("names the value itself 'body', or as told, when the whole of it is wrong", () => {
    expect(failure(() => parseInput(request, [1], toError))).toMatchObject({ field: 'body', reason: 'must be an object' });
    expect(failure(() => parseInput(z.int({ error: 'must be a whole number' }), '5', toError, { field: 'limit' }))).toMatchObject({ field: 'limit', reason: 'must be a whole number' });
  });
});

describe('withReason', () => {
  const limit = withReason(z.coerce.number().int().min(1), (given) => `must be a whole number, 1 or more, got ${JSON.stringify(given)}`);

  it('passes the inner output on', () => {
    expect(limit.parse('7')).toBe(7);
  });

  it('writes its one reason from the value as given, not from what a coercion made of it', () => {
    for (const [given, shown] of [['0', '"0"'], [0, '0'], ['ten', '"ten"'], [1.5, '1.5'], [null, 'null']] as const) {
      expect(failure(() => parseInput(limit, given, toError, { field: 'limit' }))).toMatchObject({ field: 'limit', reason: `must be a whole number, 1 or more, got ${shown}` });
    }
  });
});
