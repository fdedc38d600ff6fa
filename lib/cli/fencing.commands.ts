import { Option, type Command } from 'commander';
import { DEFAULT_FENCE_TABLE, fenceTableSql } from '../fencing/fence-sql';
import { tableProblem } from '../fencing/fencing-token.rules';
import { CliUsageError } from './cli-errors';

/**
 * Adds `fencing sql`: the migration that creates the fence table of fenced writes, printed for the user's own
 * migration tool. Contacts nothing.
 */
export function addFencingCommands(program: Command, print: (text: string) => void): void {
  const fencing = program.command('fencing').description("fenced writes: the fence table in your application's database");
  fencing
    .command('sql')
    .description('print the SQL that creates the fence table fence() writes (put it in a migration of yours); contacts nothing')
    .addOption(new Option('--dialect <name>', 'your database: postgres, or mysql (MySQL and MariaDB)').choices(['postgres', 'mysql']).makeOptionMandatory())
    .option('--table <name>', 'the table name, as fence() is told in its table option (schema.table allowed)', DEFAULT_FENCE_TABLE)
    .action((o: { dialect: 'postgres' | 'mysql'; table: string }) => {
      const problem = tableProblem(o.table);
      if (problem) throw new CliUsageError(`invalid --table: ${problem}`, 'table');
      print(fenceTableSql(o.dialect, o.table));
    });
}
