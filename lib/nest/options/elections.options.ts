import { z } from 'zod';
import { nameInput } from '../../core/names';
import { electionDefinition, electionSemaphore, MAX_ELECTION_NAME_LENGTH, type ElectionInput } from '../../elections/election';
import type { SemaphoreDefinition } from '../../permits/semaphore-definition';
import { optionsObject, parseOption } from './option-schema';
import { invalidOption } from '../../core/errors/input.errors';
import { InvalidInputError } from '../../core/errors/invalid-input.error';

const ELECTIONS = z.array(z.unknown(), {
  error: ({ input }) => `must be an array of names or { name, lease, groupPattern, acquirerPattern }, got ${JSON.stringify(input)}`,
});

/** One election: a name, or an object whose lease and patterns the election's definition checks. */
export const ELECTION = z.preprocess(
  (given) => (typeof given === 'string' ? { name: given } : given),
  optionsObject(
    {
      name: nameInput({ max: MAX_ELECTION_NAME_LENGTH }),
      lease: z.custom<ElectionInput['lease']>().optional(),
      groupPattern: z.custom<string>().optional(),
      acquirerPattern: z.custom<string>().optional(),
    } satisfies Record<keyof ElectionInput, z.ZodType>,
    { notObject: (given) => `must be a name or an object, got ${JSON.stringify(given)}`, lists: true },
  ),
);

/** The `elections` option, validated into one-permit definitions keyed by election name; an error names `elections[i]`. */
export function resolveElections(elections: unknown): Map<string, SemaphoreDefinition> {
  const resolved = new Map<string, SemaphoreDefinition>();
  parseOption(ELECTIONS.optional(), elections, 'elections')?.forEach((given, i) => {
    const input: ElectionInput = parseOption(ELECTION, given, `elections[${i}]`);
    if (resolved.has(input.name)) throw invalidOption(`elections[${i}].name`, `"${input.name}" is declared twice`);
    try {
      resolved.set(input.name, electionDefinition(input));
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      throw invalidOption(`elections[${i}].${error.field === 'duration' ? 'lease' : error.field}`, `(election "${input.name}") ${error.reason}`, electionSemaphore(input.name));
    }
  });
  return resolved;
}
