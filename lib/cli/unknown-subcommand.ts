import type { Command } from 'commander';
import { CliUsageError } from './cli-errors';

/** Words people type for a subcommand that is named otherwise here. */
const SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  upsert: ['create', 'add', 'new', 'update', 'put', 'set', 'edit', 'replace'],
  remove: ['delete', 'del', 'rm', 'drop'],
  show: ['get', 'describe', 'info', 'view'],
  describe: ['show', 'get', 'info', 'view'],
  list: ['ls', 'all'],
  cancel: ['abort', 'stop', 'kill'],
};

/**
 * Refuses a word that is not one of `group`'s subcommands, naming the one meant where it can be told. Without this,
 * a group with a default subcommand hands the word to the default (`schedules create --file x` reached `list`,
 * which answered "unknown option '--file'").
 */
export function refuseUnknownSubcommands(group: Command): Command {
  return group.hook('preSubcommand', (self, chosen) => {
    const word = self.args[0];
    if (word === undefined || word.startsWith('-') || word === chosen.name()) return;
    const names = self.commands.map((c) => c.name()).filter((name) => name !== 'help');
    const meant = names.find((name) => SYNONYMS[name]?.includes(word)) ?? names.find((name) => name.startsWith(word) || word.startsWith(name));
    const path = `${self.parent?.parent ? `${self.parent.name()} ` : ''}${self.name()}`;
    throw new CliUsageError(`unknown command '${path} ${word}'${meant ? `: did you mean '${path} ${meant}'?` : ''} (the commands of '${path}': ${names.join(', ')})`, 'command');
  });
}
