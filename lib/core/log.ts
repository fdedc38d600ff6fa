/** Where library code below the Nest layer writes its lines, by level (Nest's `Logger` in the module). */
export interface Log {
  debug(message: string): void;
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}
