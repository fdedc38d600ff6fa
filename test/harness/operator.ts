/*
 * The operator of a fault test: runs edits (concurrently, if asked) through a SemaphoreAdminService or a
 * SemaphoreAdmin and appends one `edit` event per call to the history, ok or not, so the checker can find edits
 * that reported success but are missing from the final definitions.
 */
import { appendEvent, type EditEvent } from './history';

/** An edit to run: `op` names the admin action, `args` follow the semaphore (for `put`: the definition input). */
export interface Edit {
  op: string;
  semaphore: string;
  args?: unknown[];
}

// Method names per op on SemaphoreAdminService, then on SemaphoreAdmin.
const METHODS: Record<string, string[]> = {
  put: ['putDefinition', 'put'],
  update: ['updateDefinition', 'update'],
  remove: ['removeDefinition', 'remove'],
  pause: ['pause'],
  resume: ['resume'],
  forceRelease: ['forceRelease'],
  resetPermits: ['resetPermits'],
};

type Target = object;

export class Operator {
  /** @param target a SemaphoreAdminService or SemaphoreAdmin (anything with the methods above) */
  constructor(
    private readonly historyFile: string,
    private readonly target: Target,
    private readonly name = 'operator',
  ) {}

  /** Runs one edit and records it; never throws (a failure is an `edit` event with `ok: false`). */
  edit(op: string, semaphore: string, ...args: unknown[]): Promise<EditEvent> {
    const method = (METHODS[op] ?? [op]).find((m) => typeof (this.target as Record<string, unknown>)[m] === 'function');
    if (!method) throw new TypeError(`the operator's target has no method for op "${op}"`);
    const call = (this.target as Record<string, (...a: unknown[]) => Promise<unknown>>)[method].bind(this.target);
    return this.record(op, semaphore, args, () => (op === 'put' ? call(args[0] ?? { name: semaphore }) : call(semaphore, ...args)));
  }

  /** Starts every edit at once and waits for all of them. */
  concurrently(edits: Edit[]): Promise<EditEvent[]> {
    return Promise.all(edits.map((e) => this.edit(e.op, e.semaphore, ...(e.args ?? []))));
  }

  /** Runs any call as an edit named `op` and records it (for actions the table above does not know). */
  async record(op: string, semaphore: string, args: unknown[], call: () => Promise<unknown>): Promise<EditEvent> {
    const startedAt = Date.now();
    let outcome: { ok: true; result: unknown } | { ok: false; error: string };
    try {
      outcome = { ok: true, result: await call() };
    } catch (error) {
      outcome = { ok: false, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
    return appendEvent<EditEvent>(this.historyFile, { type: 'edit', op, semaphore, args, startedAt, ...outcome }, this.name);
  }
}
