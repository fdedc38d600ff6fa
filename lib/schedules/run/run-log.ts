/** Where the runner writes its lines (Nest's `Logger` in the module), by level. */
export interface RunLog {
  debug(message: string): void;
  verbose(message: string): void;
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}
