import { InvalidInputError } from '../core/errors/invalid-input.error';
import { FINISHED_STATES, type TaskIdentity, type TaskRecord } from '../store/tasks/task';
import { awaitsJoins } from '../store/tasks/task-store.rules';
import { taskId } from './task-id.rules';
import { invalidTaskInput } from '../core/errors/input.errors';

/*
 * Submits (seed 004), pure: a task's id is idempotent, so a submit of an id that exists, or finished within the
 * retention window, keeps the task there; anything else makes a new pending record.
 */

/** What a submit asks for. */
export interface SubmitInput extends TaskIdentity {
  /** Higher is claimed first (a whole number, may be negative). Default 0. */
  readonly priority?: number;
  /** What the handler gets: JSON (stored as it is). Default `null`. */
  readonly data?: unknown;
  /** The id of the task that submitted this one (set by `context.submit`): its group's join then triggers the parent's. */
  readonly parent?: string;
  /** The run of the parent (its `seq`) that submitted this one: set by `context.submit`. */
  readonly parentRun?: number;
  /** Attempts before the task fails for good; wins over the handler's `maxAttempts`. */
  readonly maxAttempts?: number;
  /** Submit order among tasks of one priority; default: the clock in µs. */
  readonly seq?: number;
  /**
   * Whether a task of this id that already finished is run again now (`true`), or its id is remembered for the
   * retention window and the submit ignored (default). `true` makes a fixed id mean "at most once in parallel": a
   * submit while it is pending or running is still ignored. Not for grouped tasks (a group joins once).
   */
  readonly rerunFinished?: boolean;
}

/**
 * Checks the inputs of a bulk submit (`submitMany`) with `check`, one input's rules, before any is submitted: inputs
 * that are not an array, an entry that is not an object, or one that `check` refuses, throw `InvalidInputError`
 * naming its place (`inputs[3]`) and the field.
 */
export function checkInputs(inputs: unknown, check: (input: SubmitInput) => void): asserts inputs is readonly SubmitInput[] {
  const refuse = (field: string, reason: string) => new InvalidInputError(`submitMany: invalid ${field}: ${reason}`, { of: 'submitMany', field, reason });
  if (!Array.isArray(inputs)) throw refuse('inputs', `must be an array of submits, got ${inputs === null ? 'null' : typeof inputs}`);
  inputs.forEach((input: unknown, i) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw refuse(`inputs[${i}]`, `must be a submit ({ type, name or group, data, ... }), got ${JSON.stringify(input) ?? String(input)}`);
    try {
      check(input as SubmitInput);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      const field = `inputs[${i}]${error.field === undefined ? '' : `.${error.field}`}`;
      throw new InvalidInputError(`submitMany: ${field}: ${error.message}`, { of: error.of, field, reason: error.reason, ...(error.kind && { kind: error.kind }), ...(error.id !== undefined && { id: error.id }) });
    }
  });
}

/** The outcome of a submit: a new record to create, or the existing task, kept. */
export type SubmitDecision = { readonly outcome: 'created'; readonly task: TaskRecord } | { readonly outcome: 'exists'; readonly task: TaskRecord };

/**
 * Submits with an idempotent id: a task whose id exists, pending, running or finished within `retentionMs`, is
 * kept and returned; otherwise a new pending record (its epoch continues above a purged predecessor's, if known).
 */
export function decideSubmit(existing: TaskRecord | undefined, input: SubmitInput, now: number, retentionMs: number): SubmitDecision {
  const id = taskId(input);
  if (input.rerunFinished !== undefined && typeof input.rerunFinished !== 'boolean') {
    throw invalidTaskInput(id, 'rerunFinished', `must be true or false, got ${JSON.stringify(input.rerunFinished)}`);
  }
  if (input.rerunFinished && input.group) throw invalidTaskInput(id, 'rerunFinished', 'is not for grouped tasks (a group joins once)');
  const remembered = (existing?.finishedAt ?? now) + retentionMs > now && !input.rerunFinished;
  if (existing && (!FINISHED_STATES.has(existing.state) || remembered || existing.uncounted || awaitsJoins(existing))) return { outcome: 'exists', task: existing };
  const priority = input.priority ?? 0;
  if (!Number.isSafeInteger(priority)) throw invalidTaskInput(id, 'priority', `must be a whole number, got ${JSON.stringify(priority)}`);
  const { maxAttempts } = input;
  if (maxAttempts !== undefined && (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)) {
    throw invalidTaskInput(id, 'maxAttempts', `must be a whole number, 1 or more, got ${JSON.stringify(maxAttempts)}`);
  }
  const task: TaskRecord = {
    id,
    type: input.type,
    ...(input.name !== undefined && { name: input.name }),
    ...(input.group && { group: { ...input.group } }),
    ...(input.parent !== undefined && { parent: input.parent }),
    ...(input.parentRun !== undefined && { parentRun: input.parentRun }),
    priority,
    data: input.data ?? null,
    state: 'pending',
    seq: input.seq ?? now * 1000,
    submittedAt: now,
    notBefore: Math.max(now, existing?.heldUntil ?? now),
    ...(maxAttempts !== undefined && { maxAttempts }),
    epoch: existing?.epoch ?? 0,
    attempts: [],
    ...(existing?.heldUntil !== undefined && existing.heldUntil > now && { heldUntil: existing.heldUntil }),
  };
  return { outcome: 'created', task };
}
