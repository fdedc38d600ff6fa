import { GatekeeperError } from './gatekeeper.error';

/**
 * The fence table `fence()` keeps in your database does not exist there (or the database user cannot see it): it
 * comes from a migration you own. Printed as its one line: the message names the command that prints its SQL.
 */
export class FenceTableMissingError extends GatekeeperError {
  constructor(
    /** The table, as `fence()` was told to use it. */
    readonly table: string,
    /** The database it was looked for in: `postgres` or `mysql`. */
    readonly dialect: 'postgres' | 'mysql',
    options?: { cause?: unknown },
  ) {
    super(
      `The fence table "${table}" does not exist in this ${dialect === 'postgres' ? 'PostgreSQL' : 'MySQL/MariaDB'} database: create it with the SQL ` +
        `that \`npx nestjs-gatekeeper fencing sql --dialect ${dialect}${table === 'gatekeeper_fences' ? '' : ` --table ${table}`}\` prints (in a migration of yours), then retry`,
      options,
    );
    this.printAsOneLine();
  }
}
