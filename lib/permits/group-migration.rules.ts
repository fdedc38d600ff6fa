/*
 * Pure rules of a group migration and of its undo: which semaphores a migration moves by default, what each
 * group pattern becomes, and what a later edit does to the memory of the migration. No I/O, clock passed in.
 */
import { MAX_NODE_NAME_LENGTH, nameProblem } from '../core/names';
import { validateSemaphoreName } from './definition.validator';
import { fullMatch, patternError } from '../core/pattern';
import type { GroupMigrationMemory, SemaphoreDefinition } from './semaphore-definition';
import { migrationRefusal, semaphoreKind } from './semaphore-kind';
import { invalidDefinition } from '../core/errors/input.errors';
import { InvalidInputError } from '../core/errors/invalid-input.error';

/** Why a migration or its undo left a selected semaphore alone. */
export type MigrationSkipCode =
  /** Its group pattern admits the source group but is a regex (`.*`, `prod.*`), not a list of group names. */
  | 'WILDCARD'
  /** Named explicitly, but its group pattern does not admit the source group. */
  | 'NOT_ADMITTED'
  /** Undo: no migration is remembered for it (never migrated, or undone already). */
  | 'NOT_MIGRATED'
  /** Undo: its group pattern was edited after the migration; the edit is kept. */
  | 'EDITED_SINCE'
  /** Undo: its last migration was not between the groups asked for. */
  | 'OTHER_MIGRATION';

/** What a migration does to one definition. */
export type MovePlan =
  | { readonly kind: 'move'; readonly to: string }
  | { readonly kind: 'skip'; readonly code: MigrationSkipCode; readonly reason: string }
  /** Not concerned: its pattern does not admit the source group (and it was not named). */
  | { readonly kind: 'none' };

const LITERAL_ESCAPE = /^[\\^$.*+?()[\]{}|/]$/;

/**
 * The group names a pattern lists, when it is a plain alternation of literal names (`production`,
 * `production|staging`, `eu\.prod|dr-site`); `undefined` when any part is a regex (`.*`, `prod.*`, `\d`, a
 * class, a group, an empty alternative). Only such a pattern is known to admit exactly the groups it names.
 */
export function literalGroups(pattern: string): string[] | undefined {
  const groups: string[] = [];
  let current = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined || !LITERAL_ESCAPE.test(next)) return undefined;
      current += next;
      i++;
    } else if (c === '|') {
      if (current === '') return undefined;
      groups.push(current);
      current = '';
    } else if ('^$.*+?()[]{}'.includes(c)) {
      return undefined;
    } else {
      current += c;
    }
  }
  if (current === '') return undefined;
  groups.push(current);
  return groups;
}

/** A group name as a pattern that admits exactly that group. */
export function escapeGroup(group: string): string {
  return group.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/**
 * What migrating `fromGroup` to `toGroup` does to `definition`. A list of group names that contains
 * `fromGroup` gets it replaced by `toGroup` (`production|staging` → `dr-site|staging`; no name twice, so
 * `production|dr-site` → `dr-site`). Any other pattern that admits `fromGroup` (`.*`, `prod.*`) is skipped
 * unless `includeWildcards`, and then becomes `toGroup` alone. `named`: the operator named this semaphore, so
 * a pattern that does not admit `fromGroup` is reported rather than passed over.
 */
export function planMove(
  definition: SemaphoreDefinition,
  fromGroup: string,
  toGroup: string,
  { includeWildcards = false, named = false }: { includeWildcards?: boolean; named?: boolean } = {},
): MovePlan {
  const pattern = definition.groupPattern;
  const groups = literalGroups(pattern);
  if (groups) {
    if (!groups.includes(fromGroup)) {
      return named ? { kind: 'skip', code: 'NOT_ADMITTED', reason: `group pattern does not admit group "${fromGroup}"` } : { kind: 'none' };
    }
    const moved = [...new Set(groups.map((g) => (g === fromGroup ? toGroup : g)))];
    return { kind: 'move', to: moved.map(escapeGroup).join('|') };
  }
  if (patternError(pattern) !== undefined || !fullMatch(pattern, fromGroup)) {
    return named ? { kind: 'skip', code: 'NOT_ADMITTED', reason: `group pattern does not admit group "${fromGroup}"` } : { kind: 'none' };
  }
  if (!includeWildcards) {
    return {
      kind: 'skip',
      code: 'WILDCARD',
      reason: `group pattern is a regex, not a list of group names (it may admit groups other than "${fromGroup}"); include wildcards (--include-wildcards) to move it`,
    };
  }
  const to = escapeGroup(toGroup);
  return to === pattern ? { kind: 'none' } : { kind: 'move', to };
}

/** What undoing its last migration does to `definition`: restore the pattern it replaced, or skip and why. */
export function planUndo(definition: SemaphoreDefinition, filter: Pick<UndoMigrationRequest, 'fromGroup' | 'toGroup'> = {}): MovePlan {
  const memory = definition.migratedFrom;
  if (!memory) return { kind: 'skip', code: 'NOT_MIGRATED', reason: 'no migration is remembered (never migrated, or undone already)' };
  if ((filter.fromGroup !== undefined && memory.fromGroup !== filter.fromGroup) || (filter.toGroup !== undefined && memory.toGroup !== filter.toGroup)) {
    return {
      kind: 'skip',
      code: 'OTHER_MIGRATION',
      reason: `its last migration was from "${memory.fromGroup}" to "${memory.toGroup}"`,
    };
  }
  if (memory.editedAt !== undefined) {
    return {
      kind: 'skip',
      code: 'EDITED_SINCE',
      reason: `group pattern edited at ${new Date(memory.editedAt).toISOString()}, after the migration; the edit is kept`,
    };
  }
  if (patternError(memory.groupPattern) !== undefined) {
    return { kind: 'skip', code: 'NOT_MIGRATED', reason: `the remembered group pattern '${memory.groupPattern}' is not a valid regex` };
  }
  return { kind: 'move', to: memory.groupPattern };
}

/** The memory a migration leaves on the definition it moved. */
export function migrationMemory(previous: SemaphoreDefinition, fromGroup: string, toGroup: string, now: number): GroupMigrationMemory {
  return { groupPattern: previous.groupPattern, fromGroup, toGroup, at: now };
}

/**
 * An ordinary edit (update, replace, resume, startup definitions) carries the memory of the last migration over
 * to `next`: unchanged while the group pattern stays the one the migration wrote; marked `editedAt: now` once it
 * changes, so that undo leaves the edit alone instead of resurrecting the pattern the migration replaced.
 */
export function carryMigrationMemory(current: SemaphoreDefinition | undefined, next: SemaphoreDefinition, now: number): SemaphoreDefinition {
  const memory = current?.migratedFrom;
  if (!memory) return next;
  if (memory.editedAt !== undefined || next.groupPattern === current.groupPattern) return { ...next, migratedFrom: memory };
  return { ...next, migratedFrom: { ...memory, editedAt: now } };
}

/**
 * A group migration: which semaphores, from which group to which, and how. Which semaphores: `names` and/or
 * `namePattern`; neither: all of them; both: the union. Only jobs' semaphores: those of elections and allocations
 * are never selected (naming one is refused).
 */
export interface GroupMigrationRequest {
  /** These semaphores, by name; each must exist and be a job's, and each is reported if it is left alone. */
  readonly names?: readonly string[];
  /** Every semaphore whose name matches this regex (whole match, like the definitions' patterns). */
  readonly namePattern?: string;
  /** The group the jobs run in now. */
  readonly fromGroup: string;
  /** The group to move them to. */
  readonly toGroup: string;
  /** Also move semaphores whose group pattern is a regex admitting `fromGroup` (`.*`, `prod.*`). Default `false`. */
  readonly includeWildcards?: boolean;
  /**
   * Move even though no live node is known in `toGroup`. Today that case is only a warning (a node counts as
   * live once it holds a live permit); once cluster membership is known, the migration will be refused without it.
   */
  readonly force?: boolean;
  /** Only report what would change. Default `false`. */
  readonly dryRun?: boolean;
}

/**
 * An undo of group migrations: puts back the pattern each selected semaphore's last migration replaced. It selects
 * semaphores as a migration does (`names`, `namePattern`); `fromGroup` and `toGroup`, when given, narrow it to the
 * migrations from or to that group.
 */
export type UndoMigrationRequest = Pick<GroupMigrationRequest, 'names' | 'namePattern' | 'dryRun'> & Partial<Pick<GroupMigrationRequest, 'fromGroup' | 'toGroup'>>;

/** A request field's error: no semaphore is concerned, so the message names the field as `migration.<field>`. */
function fail(field: string, reason: string): never {
  if (field === 'request') throw invalidDefinition(undefined, 'migration', reason);
  throw invalidDefinition(undefined, field, reason, 'migration');
}

function group(field: string, value: unknown): string {
  const problem = nameProblem(value, { max: MAX_NODE_NAME_LENGTH, what: 'a non-empty group name' });
  if (problem !== undefined) fail(field, problem);
  if ((value as string).trim() !== value) fail(field, `must not start or end with spaces, got ${JSON.stringify(value)}`);
  return value as string;
}

function flag(field: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') fail(field, `must be true or false, got ${JSON.stringify(value)}`);
  return value === true;
}

function selection(request: Pick<GroupMigrationRequest, 'names' | 'namePattern'>): { names: string[]; namePattern?: string } {
  const { names, namePattern } = request;
  if (names !== undefined && !Array.isArray(names)) fail('names', `must be a list of semaphore names, got ${JSON.stringify(names)}`);
  const checked = (names ?? []).map((name, i) => {
    try {
      return validateSemaphoreName(name);
    } catch (error) {
      return fail('names', `#${i + 1}: ${(error as InvalidInputError).reason ?? (error as Error).message}`);
    }
  });
  for (const name of checked) {
    const kind = semaphoreKind(name);
    if (kind !== 'job') throw invalidDefinition(name, 'names', migrationRefusal(name, kind));
  }
  if (namePattern !== undefined) {
    if (typeof namePattern !== 'string' || namePattern === '') fail('namePattern', `must be a non-empty regex string, got ${JSON.stringify(namePattern)}`);
    const error = patternError(namePattern);
    if (error) fail('namePattern', `'${namePattern}' is not a valid regex: ${error}`);
  }
  return { names: [...new Set(checked)], ...(namePattern !== undefined && { namePattern }) };
}

/**
 * Checks a migration request before anything is read or written, throwing {@link InvalidInputError} (with
 * no semaphore, naming the request field: `Invalid migration.toGroup: ...`) for an empty or space-padded group, the same group twice, a bad name or
 * name pattern, or a flag that is not a boolean. Returns the request with its defaults filled in.
 */
export function validateMigrationRequest(request: GroupMigrationRequest): Required<Omit<GroupMigrationRequest, 'namePattern'>> & { names: string[]; namePattern?: string } {
  if (request === null || typeof request !== 'object') fail('request', 'must be an object');
  const fromGroup = group('fromGroup', request.fromGroup);
  const toGroup = group('toGroup', request.toGroup);
  if (fromGroup === toGroup) fail('toGroup', `must differ from the source group ("${fromGroup}")`);
  return {
    fromGroup,
    toGroup,
    ...selection(request),
    includeWildcards: flag('includeWildcards', request.includeWildcards),
    force: flag('force', request.force),
    dryRun: flag('dryRun', request.dryRun),
  };
}

/** Checks an undo request like {@link validateMigrationRequest}; its groups are optional filters. */
export function validateUndoRequest(request: UndoMigrationRequest = {}): { names: string[]; namePattern?: string; fromGroup?: string; toGroup?: string; dryRun: boolean } {
  if (request === null || typeof request !== 'object') fail('request', 'must be an object');
  return {
    ...selection(request),
    ...(request.fromGroup !== undefined && { fromGroup: group('fromGroup', request.fromGroup) }),
    ...(request.toGroup !== undefined && { toGroup: group('toGroup', request.toGroup) }),
    dryRun: flag('dryRun', request.dryRun),
  };
}

/** Whether `name` is selected, and whether by name (then it is reported even when left alone). */
export function selects(selection: { names: readonly string[]; namePattern?: string }, name: string): { selected: boolean; named: boolean } {
  const named = selection.names.includes(name);
  if (named) return { selected: true, named };
  if (selection.namePattern !== undefined) return { selected: fullMatch(selection.namePattern, name), named };
  return { selected: selection.names.length === 0, named };
}
