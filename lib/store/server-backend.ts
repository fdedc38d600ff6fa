import type { ConnectTarget } from './connect-failure';
import type { StoreBackend } from './store-backend';
import { invalidOption } from '../core/errors/input.errors';

/** Where a backend made from the module's options sends what it reports (the module's logger). */
export interface BackendReports {
  error(message: string): void;
  warn(message: string): void;
}

/**
 * How the module makes the backend of a server (PostgreSQL, Redis) from its option for it: each backend's folder
 * says, so the module knows none of them.
 */
export interface ServerBackendKind<O extends object> {
  /** The module's option of the backend (`'postgres'`), as the backend choices name it. */
  readonly option: string;
  /** The environment variable of the server's URL, read when the option names no connection. */
  readonly urlVariable: string;
  /** The option's fields that name a connection (any one does), in the order an error lists them. */
  readonly connectionFields: ReadonlyArray<keyof O & string>;
  /** Why a URL from {@link urlVariable} cannot be the server's, or `undefined` (the backend's own check of its URL). */
  urlProblem(url: string): string | undefined;
  /** The options with `url` (from {@link urlVariable}) as their connection. */
  withUrl(options: O, url: string): O;
  /** The backend, its reports (lost data, warnings) sent to `reports` unless the options say where they go. */
  create(options: O, reports: BackendReports): StoreBackend;
}

/** A backend made from the module's options, and the server start-up waits for, as it names it. */
export interface ServerBackend {
  readonly backend: StoreBackend;
  readonly target?: ConnectTarget;
}

/**
 * The backend of `kind` made from its option `given`, with the connection from the environment when `given` names
 * none (the target then says it came from there); a clear error when neither does.
 */
export function serverBackend<O extends object>(kind: ServerBackendKind<O>, given: O, env: NodeJS.ProcessEnv, reports: BackendReports): ServerBackend {
  const named = kind.connectionFields.some((field) => given[field] !== undefined && (given[field] as unknown) !== null);
  const url = named ? undefined : env[kind.urlVariable];
  if (!named && !url) {
    const fields = kind.connectionFields.map((field) => `${kind.option}.${field}`);
    throw invalidOption(kind.option, `a capability is on '${kind.option}' but no connection is given: `
      + `set ${fields.slice(0, -1).join(', ')} or ${fields[fields.length - 1]}, or ${kind.urlVariable}`);
  }
  const urlIssue = url ? kind.urlProblem(url) : undefined;
  if (urlIssue !== undefined) throw invalidOption(kind.urlVariable, urlIssue);
  const backend = kind.create(url ? kind.withUrl(given, url) : given, reports);
  const target = backend.describe?.();
  return { backend, target: target && url ? { ...target, source: kind.urlVariable } : target };
}
