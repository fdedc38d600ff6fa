import { GatekeeperError } from './gatekeeper.error';

/**
 * The fence table `fence()` keeps in your database does not exist there (or the database user cannot see it): it
 * comes from a migration you own; or, for same-database mode, the table lacks the trigger that checks the permit at
 * `COMMIT` (made by the same migration since). Printed as its one line: the message names the command that prints its SQL.
 */
export class FenceTableMissingError extends GatekeeperError {
  constructor(
    /** The table, as `fence()` was told to use it. */
    readonly table: string,
    /** The database it was looked for in: `postgres` or `mysql`. */
    readonly dialect: 'postgres' | 'mysql',
    options?: { cause?: unknown; commitCheck?: boolean },
  ) {
    const command = `\`npx nestjs-gatekeeper fencing sql --dialect ${dialect}${table === 'gatekeeper_fences' ? '' : ` --table ${table}`}\``;
    super(
      options?.commitCheck
        ? `The fence table "${table}" has no check at COMMIT (its trigger ${'gatekeeper_fence_commit_check'}), which same-database mode (checkLease) needs: ` +
            `run the SQL that ${command} prints again (in a migration of yours; it keeps the table's rows), then retry`
        : `The fence table "${table}" does not exist in this ${dialect === 'postgres' ? 'PostgreSQL' : 'MySQL/MariaDB'} database: create it with the SQL ` +
            `that ${command} prints (in a migration of yours), then retry`,
      options,
    );
    this.printAsOneLine();
  }
}
