/** Base class of every error this library throws, so callers can catch them as a group. */
export class GatekeeperError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /**
   * Makes this error print as its one line, `Name: message`, wherever Node or Nest prints it (an unhandled rejection,
   * Nest's start-up handler): for mistakes a user fixes from the message alone (an option, a decorator, a store out of
   * reach at start), where a stack of the library's and Nest's frames only buries it. Its fields stay readable, as
   * properties that are not listed (Node prints an uncaught error's listed properties after it).
   */
  protected printAsOneLine(): void {
    this.stack = `${this.name}: ${this.message}`;
    for (const key of Object.keys(this)) Object.defineProperty(this, key, { enumerable: false });
  }
}
