import { CommanderError } from 'commander';
import { GatekeeperError } from '../core/errors/gatekeeper.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { EditConflictError } from '../core/errors/edit-conflict.error';
import { InvalidInputError } from '../core/errors/invalid-input.error';
import { NotFoundError } from '../core/errors/not-found.error';

/** Exit codes of the CLI. */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** The cluster refused it: unknown semaphore, election or allocation, a definition that does not validate, conflicting edits, no such permit. */
  rejected: 1,
  /** The command line is wrong; found before connecting, so nothing was contacted. */
  usage: 2,
  /** The cluster (or the live app a command asks) could not be reached, or a call to it timed out. */
  unreachable: 3,
  /** `jobs run --wait`: the run started but did not complete (it failed, was stopped), or was still running when the wait ran out. */
  runNotCompleted: 4,
  /** `jobs health`: the job is down (it has not completed a run within `--within`, and is not paused). */
  jobDown: 5,
} as const;

/** The CLI option or argument each validated field comes from, to name what the user typed. */
const OPTION_OF: Readonly<Record<string, string>> = {
  backend: '--backend',
  members: '--members',
  clusterName: '--cluster-name',
  mapPrefix: '--map-prefix',
  connectTimeout: '--connect-timeout',
  permits: '--permits',
  duration: '--duration',
  within: '--within',
  groupPattern: '--group-pattern',
  acquirerPattern: '--acquirer-pattern',
  fromGroup: '--from-group',
  toGroup: '--to-group',
  namePattern: '--name-pattern',
  names: '[names...]',
  name: '<name>',
  token: '<token>',
  election: '[election]',
  allocation: '<name>',
  job: '<job>',
  limit: '--limit',
  timeout: '--timeout',
  node: '--node',
  adminToken: '--admin-token',
  adminPath: '--admin-path',
  expectedRevision: '--expected-revision',
  file: '--file',
  id: '<id>',
};

/** A command line that is wrong, found before anything is contacted: exit 2. */
export class CliUsageError extends Error {
  constructor(
    message: string,
    /** The field that is wrong (`connectTimeout`, `token`, `groupPattern`), when one is. */
    readonly field?: string,
    /** The semaphore concerned, when one is. */
    readonly semaphore?: string,
  ) {
    super(message);
    this.name = 'CliUsageError';
  }
}

/**
 * The live nodes keep a capability's state on a store this command was not pointed at, in their own memory, or on
 * two stores at once (a move under way): the CLI changes nothing there rather than edit a store no node reads. Known
 * only once the live nodes were read, so a rejection (exit 1).
 */
export class StoreNotGivenError extends GatekeeperError {
  /** The option that names the store, for `--json`. */
  readonly field = 'backend';

  constructor(
    /** The capability whose store is missing: `permits`, `presence`, `schedules`, `history` or `tasks`. */
    readonly capability: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * `set` was asked to create a definition (none exists under that name) without `--duration`, which has no default.
 * Known only once the cluster was read, so it is a rejection (exit 1), not a usage error.
 */
export class DurationRequiredError extends GatekeeperError {
  /** The field to give, for `--json` (`option: '--duration'`). */
  readonly field = 'duration';

  constructor(
    /** The semaphore that does not exist yet. */
    readonly semaphore: string,
  ) {
    super(`--duration is required: "${semaphore}" does not exist yet, so set creates it, and a new definition needs a permit duration (e.g. --duration 30s)`);
  }
}

/**
 * A command that needs a live app (its code: describe, run now) found none to ask: none announces an
 * `httpAddress`, or none answered. Exit 3, as when the cluster cannot be reached.
 */
export class LiveNodeUnreachableError extends GatekeeperError {}

/** A live app's admin API answered with an error (401/403, 404 for a job it does not have, 409 for a run refused): exit 1. */
export class AdminApiError extends GatekeeperError {
  constructor(
    message: string,
    /** The HTTP status it answered. */
    readonly status: number,
    /** The node (acquirer) that answered, or the nodes asked. */
    readonly node: string,
    /** The job asked about. */
    readonly job?: string,
    /** The reason code it gave (`UNKNOWN_JOB`, `PAUSED`, `NO_ELIGIBLE_NODE`, `LOCKED`, `RECOVERING`, `NOT_STARTED`). */
    readonly reason?: string,
  ) {
    super(message);
  }
}

/** `jobs run --wait`: the run started but did not complete, or was still running when the wait ran out: exit 4. */
export class RunNotCompletedError extends GatekeeperError {
  constructor(
    message: string,
    /** The job run. */
    readonly job: string,
    /** How it ended (`failed`, `aborted`, `stopped`, `replaced`), or `running` when the wait ran out first. */
    readonly outcome: string,
    /** The node that ran it. */
    readonly node: string,
    /** The fencing token it ran under. */
    readonly token: number,
  ) {
    super(message);
  }
}

/**
 * `store init` declared nothing (the store is in use, or was found lost): exit 1, so a deploy script that runs it
 * before every start can tell a first deployment from a later one.
 */
export class NothingDeclaredError extends GatekeeperError {}

/** An edit aimed at a store its capability moved away from (`store move --finish`): exit 1, nothing changed. */
export class MovedAwayError extends GatekeeperError {}

/** `store move` was given one store under two names (a record written on the one is read on the other): exit 1, nothing moved. */
export class SameStoreError extends GatekeeperError {}

/** `store move tasks --finish` left tasks on the old store that a live node works there: exit 1, run it again once they stopped. */
export class MoveUnfinishedError extends GatekeeperError {}

/**
 * `jobs forget` found the job alive (a live node has it), or could not ask every live node: exit 1, nothing removed.
 */
export class JobNotGoneError extends GatekeeperError {}

/** `jobs health`: the job is down: exit 5. */
export class JobDownError extends GatekeeperError {
  constructor(
    message: string,
    /** The job asked about. */
    readonly job: string,
  ) {
    super(message);
  }
}

/** The cluster keeps no run history of a job and no node counted a skipped tick of it: exit 1. */
export class NoJobHistoryError extends GatekeeperError {
  constructor(
    /** The job asked about. */
    readonly job: string,
    known: readonly string[],
  ) {
    super(
      `No history of job "${job}" in the cluster: no node has written a run, missed instant or skipped tick of it (jobs are named Class.method, a schedule's id or leader:<election>:<Class.method>` +
        `${known.length > 0 ? `; jobs with a history: ${known.slice(0, 10).join(', ')}${known.length > 10 ? ', ...' : ''}` : ''})`,
    );
  }
}

/** Turns a validation error raised before connecting into a usage error; anything else is passed through. */
export function asUsageError(error: unknown): unknown {
  if (error instanceof InvalidInputError) {
    const semaphore = error.kind !== 'semaphore' || error.id!.startsWith('<') ? undefined : error.id;
    const message = semaphore ? error.message : `invalid ${OPTION_OF[error.field ?? ''] ?? error.field}: ${error.reason}`;
    return new CliUsageError(message, error.field, semaphore);
  }
  return error;
}

/** What an error means for the CLI: its exit code and its JSON form (`{ "error": { ... } }` under `--json`). */
export function describeError(error: unknown): { exitCode: number; text: string; json: { error: Record<string, unknown> } } {
  const message = error instanceof Error ? error.message : String(error);
  let exitCode: number = EXIT.rejected;
  let code = 'REJECTED';
  const details: Record<string, unknown> = {};
  if (error instanceof CliUsageError || error instanceof CommanderError) {
    exitCode = EXIT.usage;
    code = 'USAGE';
    if (error instanceof CommanderError) details.commanderCode = error.code;
  } else if (error instanceof RunNotCompletedError) {
    exitCode = EXIT.runNotCompleted;
    code = 'RUN_NOT_COMPLETED';
    Object.assign(details, { outcome: error.outcome, node: error.node, token: error.token });
  } else if (error instanceof JobDownError) {
    exitCode = EXIT.jobDown;
    code = 'JOB_DOWN';
  } else if (error instanceof StoreUnavailableError || error instanceof LiveNodeUnreachableError) {
    exitCode = EXIT.unreachable;
    code = 'UNREACHABLE';
  } else if (!(error instanceof GatekeeperError)) {
    code = 'FAILED';
  }
  const field = (error as { field?: unknown }).field;
  const semaphore = (error as { semaphore?: unknown }).semaphore;
  if (typeof field === 'string') {
    details.field = field;
    if (OPTION_OF[field]) details.option = OPTION_OF[field];
  }
  if (typeof semaphore === 'string') details.semaphore = semaphore;
  const election = (error as { election?: unknown }).election;
  if (typeof election === 'string') details.election = election;
  const allocation = (error as { allocation?: unknown }).allocation;
  if (typeof allocation === 'string') details.allocation = allocation;
  const job = (error as { job?: unknown }).job;
  if (typeof job === 'string') details.job = job;
  // The library's errors about a named thing name it by its kind: `{ "semaphore": "billing" }`, `{ "schedule": "nightly" }`.
  if ((error instanceof NotFoundError || error instanceof InvalidInputError || error instanceof EditConflictError) && error.kind !== undefined) {
    details[error.kind] = error.id;
  }
  if (error instanceof EditConflictError) {
    details.reason = error.actualRevision === undefined ? 'WRITE_CONFLICT' : 'REVISION_CONFLICT';
    if (error.actualRevision !== undefined) Object.assign(details, { expectedRevision: error.expectedRevision, actualRevision: error.actualRevision });
  }
  if (error instanceof NotFoundError) details.reason = `UNKNOWN_${error.kind.toUpperCase()}`;
  if (error instanceof AdminApiError) {
    // What the app answered, for scripts: the node, the HTTP status and the reason code (PAUSED, UNKNOWN_JOB, ...).
    details.node = error.node;
    details.status = error.status;
    if (error.reason !== undefined) details.reason = error.reason;
  }
  const evidence = (error as { evidence?: unknown }).evidence;
  if (Array.isArray(evidence)) details.evidence = evidence;
  const type = error instanceof Error ? error.name : 'Error';
  // Commander's messages already start with "error: ".
  const text = message.startsWith('error: ') ? message : `error: ${message}`;
  return { exitCode, text, json: { error: { code, exitCode, type, message: message.replace(/^error: /, ''), ...details } } };
}
