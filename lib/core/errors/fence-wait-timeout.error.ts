import { GatekeeperError } from './gatekeeper.error';

/**
 * A fence waited for another transaction holding the resource's fence row longer than its bound (`fence()`'s
 * `maxWait`, twice over) and gave up: an older holder's transaction was still open (frozen, or working past its
 * lease), or a newer one's. Nothing was written: on PostgreSQL the transaction is failed, on MySQL/MariaDB rolled back.
 * Retry the work later; if it keeps happening, look for a transaction that stays open on that resource.
 */
export class FenceWaitTimeoutError extends GatekeeperError {
  constructor(
    /** The resource the write was for. */
    readonly resource: string,
    /** The token this holder offered. */
    readonly token: number,
    /** How long the fence waited, in milliseconds. */
    readonly waitedMs: number,
    dialect: 'postgres' | 'mysql',
    options?: { cause?: unknown },
  ) {
    super(
      `Fenced write to "${resource}" with token ${token} gave up after waiting ${waitedMs} ms for another holder's open transaction on it ` +
        `(${dialect === 'postgres' ? 'PostgreSQL' : 'MySQL/MariaDB'} lock wait): nothing was written; retry later`,
      options,
    );
    this.printAsOneLine();
  }
}
