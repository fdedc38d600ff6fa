import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { z } from 'zod';
import { buildProgram } from '../../lib/cli/gatekeeper.cli';
import { ENV } from '../../lib/core/env-vars';
import { BACKEND_NAMES } from '../../lib/nest/options/backend-choice.options';
import { OPTION_SCHEMAS } from '../../lib/nest/options/gatekeeper-options.resolver';

/*
 * The reference pages list what the code has: the backends the `backend` option takes, every module option at every
 * level, the environment variables the library reads, and the CLI's commands and flags. Each list is read from the
 * code (the options' schemas, the variables' one module, the CLI's program as commander builds it) and compared both
 * ways with the page: nothing undocumented, nothing documented that the code does not have (issue 48).
 */

const ROOT = join(__dirname, '..', '..');
const page = (name: string) => readFileSync(join(ROOT, 'docs', name), 'utf8');
const sorted = (values: Iterable<string>) => [...new Set(values)].sort();
const missingFrom = (wanted: Iterable<string>, have: Iterable<string>) => {
  const present = new Set(have);
  return sorted([...wanted].filter((value) => !present.has(value)));
};

// ---- Markdown: tables and code spans ----

interface Table {
  /** The heading the table is under. */
  readonly heading: string;
  readonly header: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
}

/** A table row's cells (a `\|` inside a cell is a pipe of its text, not a border). */
function cells(line: string): string[] {
  return line.trim().replace(/^\||\|$/g, '').split(/(?<!\\)\|/).map((cell) => cell.trim());
}

/** Every pipe table of a page, with the heading it is under (code blocks skipped). */
function tables(markdown: string): Table[] {
  const found: Array<{ heading: string; header: string[]; rows: string[][] }> = [];
  let heading = '';
  let fenced = false;
  let current: (typeof found)[number] | undefined;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    if (/^#+ /.test(line)) heading = line.replace(/^#+ /, '');
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    if (current === undefined) {
      current = { heading, header: cells(line), rows: [] };
      found.push(current);
    } else if (!/^\|[\s|:-]+\|$/.test(line.trim())) {
      current.rows.push(cells(line));
    }
  }
  return found;
}

/** The code spans of a text, a table's `\|` read as `|`. */
function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1].replace(/\\\|/g, '|'));
}

/** The one table of `tables` whose header starts with `first`. */
function tableHeaded(all: readonly Table[], first: string): Table {
  const found = all.filter((table) => table.header[0] === first);
  if (found.length !== 1) throw new Error(`expected one table headed "${first}", found ${found.length}`);
  return found[0];
}

// ---- Options: the schemas' keys ----

/** The keys of an object schema (or of the objects in it), each with its own. */
type KeyTree = Map<string, KeyTree>;

/** The part of zod's definitions the walk reads: where an object's shape, or the schemas inside a schema, are. */
interface WalkedDef {
  readonly type: string;
  readonly shape?: Record<string, z.core.$ZodType>;
  readonly in?: z.core.$ZodType;
  readonly out?: z.core.$ZodType;
  readonly innerType?: z.core.$ZodType;
  readonly options?: readonly z.core.$ZodType[];
  readonly element?: z.core.$ZodType;
}

/**
 * Every key `schema` knows, at every depth: the shapes of its objects, through pipes (a preprocess, `optionsObject`'s
 * key check before its fields), optional and default wrappers, unions (a name or an object) and lists. What a schema
 * takes whole (a custom check, a transform) has no keys.
 */
function keysOf(schema: z.core.$ZodType, into: KeyTree = new Map()): KeyTree {
  const def = schema._zod.def as unknown as WalkedDef;
  const inner = [def.in, def.out, def.innerType, def.element, ...(def.options ?? [])].filter((s): s is z.core.$ZodType => s !== undefined);
  for (const [key, value] of Object.entries(def.type === 'object' ? (def.shape ?? {}) : {})) {
    const sub = into.get(key) ?? new Map();
    into.set(key, keysOf(value, sub));
  }
  for (const schemaInside of inner) keysOf(schemaInside, into);
  return into;
}

/** `tree`'s keys as dotted paths under `prefix` (an item of a list is named by its list: `elections.name`). */
function paths(tree: KeyTree, prefix = ''): string[] {
  return [...tree].flatMap(([key, sub]) => [`${prefix}${key}`, ...paths(sub, `${prefix}${key}.`)]);
}

/** Every module option, as the schemas know them. */
const OPTION_TREE: KeyTree = new Map(Object.entries(OPTION_SCHEMAS).map(([key, schema]) => [key, schema === null ? new Map() : keysOf(schema)]));
const CODE_OPTIONS = new Set(paths(OPTION_TREE));

/**
 * The keys of an object as the docs write one in a code span (`{ interval: '5s', ttl: 3 × interval, store }`), as
 * dotted paths, nested objects included; a value is skipped whatever it holds (quotes, lists, calls).
 */
function literalKeys(text: string): string[] {
  const keys: string[] = [];
  let i = 0;
  const space = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const skipValue = () => {
    let depth = 0;
    for (; i < text.length; i++) {
      const c = text[i];
      if (c === "'" || c === '"') i = text.indexOf(c, i + 1);
      else if ('{[('.includes(c)) depth++;
      else if ('}])'.includes(c)) {
        if (depth === 0) return;
        depth--;
      } else if (c === ',' && depth === 0) return;
    }
  };
  const object = (prefix: string) => {
    i++; // {
    for (space(); i < text.length && text[i] !== '}'; space()) {
      const key = /^[A-Za-z_$][\w$]*/.exec(text.slice(i))?.[0];
      if (key === undefined) throw new Error(`cannot read the object ${text} at ${i}`);
      keys.push(`${prefix}${key}`);
      i += key.length;
      space();
      if (text[i] === ':') {
        i++;
        space();
        if (text[i] === '{') {
          object(`${prefix}${key}.`);
          i++; // }
        } else skipValue();
      }
      space();
      if (text[i] === ',') i++;
    }
  };
  object('');
  return keys;
}

/**
 * The options configuration.md documents: each row of the module options' table (its parents too: `identity.group`
 * names `identity`), the keys of an option's `{ … }` in its row (an option's object; or, where its keys are not the
 * option's, an example of the module options themselves: `{ backend, backends: { history } }`), and the fields of the
 * semaphore definitions' table as `definitions.<field>`. A `{ … }` in the row of an option read whole (`clock`'s
 * `{ now(): number }`) is its value's type, not options.
 */
function documentedOptions(markdown: string): Set<string> {
  const all = tables(markdown);
  const documented = new Set<string>();
  for (const row of tableHeaded(all, 'option').rows) {
    const [option] = codeSpans(row[0]);
    option.split('.').forEach((_, i, parts) => documented.add(parts.slice(0, i + 1).join('.')));
    if (!CODE_OPTIONS.has(option) || !paths(OPTION_TREE).some((path) => path.startsWith(`${option}.`))) continue;
    for (const literal of codeSpans(row[2]).filter((span) => span.startsWith('{'))) {
      const keys = literalKeys(literal);
      const asOption = keys.map((key) => `${option}.${key}`);
      const read = asOption.every((path) => CODE_OPTIONS.has(path)) || !keys.every((key) => CODE_OPTIONS.has(key)) ? asOption : keys;
      read.forEach((path) => documented.add(path));
    }
  }
  const definitions = all.filter((table) => table.heading === 'Semaphore definitions' && table.header[0] === 'field');
  expect(definitions).toHaveLength(1);
  for (const row of definitions[0].rows) documented.add(`definitions.${codeSpans(row[0])[0]}`);
  return documented;
}

// ---- CLI: the program's commands and flags ----

/** Commander's name of a command's default subcommand (`jobs` runs `jobs list`), not in its typed API. */
const defaultSubcommand = (command: Command) => (command as unknown as { _defaultCommandName?: string })._defaultCommandName;

const program = buildProgram({ out: () => undefined, err: () => undefined });
const help = program.createHelp();
const longFlags = (command: Command) => help.visibleOptions(command).map((option) => option.long).filter((flag): flag is string => flag !== undefined);

/** Every command that runs, by its words (`tasks list`), with its flags (`--help`, which every command has, apart). */
function codeCommands(command: Command, prefix = ''): Map<string, string[]> {
  return new Map(
    command.commands.flatMap((sub) => {
      const words = `${prefix}${sub.name()}`;
      return sub.commands.length > 0 ? [...codeCommands(sub, `${words} `)] : [[words, longFlags(sub).filter((flag) => flag !== '--help')] as const];
    }),
  );
}

/**
 * The commands one usage in the docs names (`schedules pause|resume|remove <id>`: three; `schedules [list]`: the
 * default subcommand), read word by word down the program's tree; a word no command has ends the words (it is an
 * argument), and a first word no command has names a command that does not exist.
 */
function commandsOfUsage(usage: string): string[] {
  let at: Array<{ words: string; command: Command }> = [{ words: '', command: program }];
  const tokens = usage.split(/\s+/);
  for (const token of tokens) {
    const names = token.replace(/^\[(.*)\]$/, '$1').split('|');
    const next = at.flatMap(({ words, command }) =>
      names.map((name) => ({ words: `${words}${name} `, command: command.commands.find((sub) => sub.name() === name) })),
    );
    if (!next.every((step): step is { words: string; command: Command } => step.command !== undefined)) break;
    at = next;
  }
  if (at.length === 1 && at[0].command === program) return [`${tokens[0]} (no such command)`];
  return at.map(({ words, command }) => {
    const fallback = command.commands.length > 0 ? defaultSubcommand(command) : undefined;
    if (command.commands.length > 0 && fallback === undefined) return `${words.trim()} (a group: name its subcommand)`;
    return fallback === undefined ? words.trim() : `${words}${fallback}`;
  });
}

/**
 * The commands and flags operating.md's command table documents: each span of a row's first cell is a usage
 * (`jobs history <job> [--limit n]`) with its flags, and a span of flags alone (`[--force]`) belongs to every usage
 * of its row.
 */
function documentedCommands(markdown: string): Map<string, string[]> {
  const documented = new Map<string, string[]>();
  for (const row of tableHeaded(tables(markdown), 'command').rows) {
    const spans = codeSpans(row[0]);
    const shared = spans.filter((span) => /^\[?--/.test(span)).flatMap((span) => span.match(/--[a-z][a-z-]*/g) ?? []);
    for (const usage of spans.filter((span) => !/^\[?--/.test(span))) {
      const flags = [...(usage.match(/--[a-z][a-z-]*/g) ?? []), ...shared];
      for (const command of commandsOfUsage(usage)) documented.set(command, [...(documented.get(command) ?? []), ...flags]);
    }
  }
  return documented;
}

// ---- Environment variables ----

const CODE_ENV: readonly string[] = Object.values(ENV);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The `GATEKEEPER_*` names a text mentions; `GATEKEEPER_HZ_*` is kept as the prefix `GATEKEEPER_HZ_*`. */
const envNames = (text: string) => [...text.matchAll(/GATEKEEPER_[A-Z0-9_]*\*|GATEKEEPER_[A-Z0-9_]*[A-Z0-9]/g)].map((match) => match[0]);
const isReadByCode = (name: string) => (name.endsWith('*') ? CODE_ENV.some((read) => read.startsWith(name.slice(0, -1))) : CODE_ENV.includes(name));

describe('the docs list what the code has', () => {
  const configuration = page('configuration.md');
  const operating = page('operating.md');
  const backends = page('backends.md');

  describe('backends', () => {
    const backendRows = tableHeaded(tables(configuration), 'option').rows.filter((row) => ['backend', 'backends'].includes(codeSpans(row[0])[0]));

    it.each(['backend', 'backends'])('configuration.md\'s %s row names every backend the option takes by name, and no other', (option) => {
      const row = backendRows.find((candidate) => codeSpans(candidate[0])[0] === option);
      const named = codeSpans(row?.[2] ?? '').flatMap((span) => /^'(\w+)'$/.exec(span)?.[1] ?? []);
      expect(sorted(named)).toEqual(sorted(BACKEND_NAMES));
    });

    it('backends.md has a column for every backend in each table by backend', () => {
      const byBackend = tables(backends).filter((table) => table.header.some((cell) => BACKEND_NAMES.some((name) => cell.toLowerCase().startsWith(name))));
      expect(byBackend.length).toBeGreaterThanOrEqual(2);
      for (const table of byBackend) {
        const columns = BACKEND_NAMES.filter((name) => table.header.some((cell) => cell.toLowerCase().startsWith(name)));
        expect({ table: table.header.join(' | '), columns: sorted(columns) }).toEqual({ table: table.header.join(' | '), columns: sorted(BACKEND_NAMES) });
      }
    });
  });

  describe('module options', () => {
    const documented = documentedOptions(configuration);

    it('reads the options from the schemas, nested ones included', () => {
      // Sanity of the walk: a top-level option, an object's key, a key two levels down, a list's item's key.
      expect([...CODE_OPTIONS]).toEqual(expect.arrayContaining(['admin', 'tasks.concurrency', 'schedules.history.keep', 'allocations.manual.nodeIndex']));
    });

    it('configuration.md documents every option the schemas know', () => {
      expect(missingFrom(CODE_OPTIONS, documented)).toEqual([]);
    });

    it('configuration.md documents no option the schemas refuse', () => {
      expect(missingFrom(documented, CODE_OPTIONS)).toEqual([]);
    });
  });

  describe('environment variables', () => {
    it('every GATEKEEPER_* name in lib/ is a variable of lib/core/env-vars.ts (or a constant declared in lib/)', () => {
      const sources = sourceFiles(join(ROOT, 'lib')).map((file) => readFileSync(file, 'utf8'));
      const declared = new Set(sources.flatMap((text) => [...text.matchAll(/(?:const|let|class|function|enum)\s+(GATEKEEPER_[A-Z0-9_]+)/g)].map((m) => m[1])));
      const mentioned = sources.flatMap(envNames).filter((name) => !declared.has(name));
      expect(missingFrom(mentioned, CODE_ENV)).toEqual([]);
    });

    it('configuration.md and operating.md document every variable the library reads', () => {
      expect(missingFrom(CODE_ENV, [...envNames(configuration), ...envNames(operating)])).toEqual([]);
    });

    // Every page, and the README: an app's own variable named GATEKEEPER_* would look like one of ours.
    const pages = [...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => [name, page(name)]), ['README.md', readFileSync(join(ROOT, 'README.md'), 'utf8')]];
    it.each(pages)('%s names no variable the library does not read', (_name, text) => {
      expect(sorted(envNames(text).filter((variable) => !isReadByCode(variable)))).toEqual([]);
    });
  });

  describe('CLI', () => {
    const code = codeCommands(program);
    const documented = documentedCommands(operating);

    it('reads the commands from the program', () => {
      expect([...code.keys()]).toEqual(expect.arrayContaining(['list', 'tasks counts', 'jobs run', 'store migrate']));
    });

    it('operating.md documents every command, and no command the CLI does not have', () => {
      expect({ undocumented: missingFrom(code.keys(), documented.keys()), unknown: missingFrom(documented.keys(), code.keys()) }).toEqual({
        undocumented: [],
        unknown: [],
      });
    });

    it.each([...code.keys()])('operating.md documents every flag of `%s`, and no other', (command) => {
      const flags = documented.get(command) ?? [];
      expect({ undocumented: missingFrom(code.get(command) ?? [], flags), unknown: missingFrom(flags, code.get(command) ?? []) }).toEqual({
        undocumented: [],
        unknown: [],
      });
    });

    it('operating.md documents every global option with its variable, and no other', () => {
      const rows = tableHeaded(tables(operating), 'global option').rows;
      const flags = rows.flatMap((row) => codeSpans(row[0]).flatMap((span) => span.match(/--[a-z][a-z-]*/g) ?? []));
      expect({ undocumented: missingFrom(longFlags(program), flags), unknown: missingFrom(flags, longFlags(program)) }).toEqual({ undocumented: [], unknown: [] });
      for (const option of help.visibleOptions(program).filter((candidate) => candidate.envVar !== undefined)) {
        const row = rows.find((candidate) => codeSpans(candidate[0]).some((span) => span.split(/[\s,]+/).includes(option.long ?? '')));
        expect({ option: option.long, variables: sorted(envNames(row?.join(' ') ?? '')) }).toEqual({ option: option.long, variables: [option.envVar] });
      }
    });
  });
});
