import { z } from 'zod';
import { parseDuration } from '../core/duration';
import { onlyKeys } from '../core/input-fields';
import { parseInput } from '../core/input-schema';
import { nameProblem } from '../core/names';
import { validateDefinition } from '../permits/definition.validator';
import type { SemaphoreDefinition } from '../permits/semaphore-definition';
import type { ManualSlot } from './manual-allocation';
import {
  allocationSemaphore, DEFAULT_ALLOCATION_LEASE, MAX_ALLOCATION_NAME_LENGTH, DEFAULT_ALLOCATION_PARTICIPANTS, DEFAULT_REBALANCE_DELAY, type AllocationInput,
} from './allocation';
import { invalidOption, MODULE_OPTIONS } from '../core/errors/input.errors';
import { InvalidInputError } from '../core/errors/invalid-input.error';

/** An allocation after validation: its semaphore's definition and its rebalance delay. */
export interface ResolvedAllocation {
  /** The definition of `allocation:<name>` (`permits`: how many nodes may take part). */
  readonly definition: SemaphoreDefinition;
  /** The rebalance delay in ms. */
  readonly delayMs: number;
  /** Manual mode: this node's slice (nothing is stored in the cluster). */
  readonly manual?: ManualSlot;
}

const KEYS: ReadonlyArray<keyof AllocationInput> = ['name', 'lease', 'groupPattern', 'acquirerPattern', 'maxParticipants', 'rebalanceDelay', 'manual'];

const MANUAL_KEYS: ReadonlyArray<keyof ManualSlot> = ['nodeCount', 'nodeIndex'];

/**
 * The keys of one allocation as declared, `manual`'s among them: a key that is not an option is named first, at either
 * level (a misspelt `nodeIndx` must not be read as a missing index); the values are read after, by
 * {@link resolveAllocation}, which also words a `manual` that is no object. Typed as a plain `z.ZodType`: the inferred
 * type, an index signature beside `manual`, makes a declaration TypeScript 5 refuses in an app whose skipLibCheck is off
 * (TS2411).
 */
export const ALLOCATION_KEYS: z.ZodType = onlyKeys(KEYS, `is not an option (expected one of ${KEYS.join(', ')})`).extend({
  manual: z.preprocess(
    (given) => (given !== null && typeof given === 'object' && !Array.isArray(given) ? given : undefined),
    onlyKeys(MANUAL_KEYS, `is not an option (expected ${MANUAL_KEYS.join(', ')})`).optional(),
  ),
});

/**
 * Validates one allocation as users declare it. Throws {@link InvalidInputError} naming `field` (e.g.
 * `allocations[0].lease`) and the allocation.
 */
export function resolveAllocation(input: AllocationInput, field = 'allocation'): ResolvedAllocation {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw invalidOption(field, `must be an object { name, lease, groupPattern, acquirerPattern, maxParticipants, rebalanceDelay }, got ${JSON.stringify(input)}`);
  }
  parseInput(ALLOCATION_KEYS, input, (key, reason) => invalidOption(`${field}.${key}`, reason));
  const problem = nameProblem(input.name, { max: MAX_ALLOCATION_NAME_LENGTH });
  if (problem !== undefined) throw invalidOption(`${field}.name`, problem);
  const fields: Record<string, string> = { duration: 'lease', permits: 'maxParticipants' };
  try {
    const definition = validateDefinition({
      name: allocationSemaphore(input.name),
      permits: input.maxParticipants ?? DEFAULT_ALLOCATION_PARTICIPANTS,
      duration: input.lease ?? DEFAULT_ALLOCATION_LEASE,
      ...(input.groupPattern !== undefined && { groupPattern: input.groupPattern }),
      ...(input.acquirerPattern !== undefined && { acquirerPattern: input.acquirerPattern }),
    });
    const delayMs = parseDuration(input.rebalanceDelay ?? DEFAULT_REBALANCE_DELAY, allocationSemaphore(input.name), 'rebalanceDelay', { allowZero: true });
    const manual = input.manual === undefined ? undefined : resolveManual(input.manual, `${field}.manual`, input.name);
    return { definition, delayMs, ...(manual && { manual }) };
  } catch (error) {
    if (!(error instanceof InvalidInputError) || error.of === MODULE_OPTIONS) throw error;
    throw invalidOption(`${field}.${fields[error.field ?? ''] ?? error.field}`, `(allocation "${input.name}") ${error.reason}`, allocationSemaphore(input.name));
  }
}

/** The `allocations` module option, validated, by allocation name. */
export function resolveAllocations(allocations: readonly AllocationInput[] | undefined): Map<string, ResolvedAllocation> {
  if (allocations === undefined) return new Map();
  if (!Array.isArray(allocations)) throw invalidOption('allocations', `must be an array of { name, lease, ... }, got ${JSON.stringify(allocations)}`);
  const resolved = new Map<string, ResolvedAllocation>();
  allocations.forEach((input, i) => {
    const allocation = resolveAllocation(input, `allocations[${i}]`);
    if (resolved.has(input.name)) throw invalidOption(`allocations[${i}].name`, `"${input.name}" is declared twice`);
    resolved.set(input.name, allocation);
  });
  return resolved;
}

function resolveManual(manual: unknown, field: string, name: string): ManualSlot {
  const given = manual as Partial<ManualSlot> | null;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    throw invalidOption(field, `(allocation "${name}") must be { nodeCount, nodeIndex }, got ${JSON.stringify(manual)}`);
  }
  const { nodeCount, nodeIndex } = given;
  if (!Number.isSafeInteger(nodeCount) || nodeCount! < 1) {
    throw invalidOption(`${field}.nodeCount`, `(allocation "${name}") must be a whole number, 1 or more, got ${JSON.stringify(nodeCount)}`);
  }
  if (!Number.isSafeInteger(nodeIndex) || nodeIndex! < 0 || nodeIndex! >= nodeCount!) {
    throw invalidOption(`${field}.nodeIndex`, `(allocation "${name}") must be a whole number from 0 to ${nodeCount! - 1}, got ${JSON.stringify(nodeIndex)}`);
  }
  return { nodeCount: nodeCount!, nodeIndex: nodeIndex! };
}
