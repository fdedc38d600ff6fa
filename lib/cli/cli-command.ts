import type { SemaphoreAdmin } from '../permits/semaphore-admin';
import type { CliStores } from './cli-connection';

/** What a command prints: `json` under `--json`, else `text`; `warnings` go to stderr in text mode. */
export interface Outcome {
  /** The result for scripts (`--json`). */
  json: unknown;
  /** The result for people. */
  text: string;
  /** What the operator should check, printed as `warning: ...` on stderr (text mode only). */
  warnings?: readonly string[];
}

/** A checked command, ready to run once connected: over the permit admin, and the stores for what it does not cover. */
export type Action = (admin: SemaphoreAdmin, stores: CliStores) => Promise<Outcome>;

/** Checks a command (everything that can be checked offline, in `check`), then connects, runs its action and prints. */
export type Execute = (check: () => Action) => Promise<void>;
