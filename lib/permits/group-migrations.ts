import type { Clock } from '../core/clock';
import {
  migrationMemory, planMove, planUndo, selects, validateMigrationRequest, validateUndoRequest,
  type GroupMigrationRequest, type MigrationSkipCode, type MovePlan, type UndoMigrationRequest,
} from './group-migration.rules';
import { livePermits } from './permit.rules';
import type { PermitStore } from './permit-store';
import type { SemaphoreDefinition } from './semaphore-definition';
import type { SemaphoreEdits } from './semaphore-edits';
import type { SemaphoreEntry } from './semaphore-entry';
import { migrationRefusal, semaphoreKind } from './semaphore-kind';
import { invalidDefinition } from '../core/errors/input.errors';
import { unknownSemaphore } from './errors/semaphore.errors';

/**
 * What {@link SemaphoreAdminService.migrateGroups} did (or, in a dry run, would do). An undo
 * ({@link SemaphoreAdminService.undoMigration}) answers the same `dryRun`, `changes` and `skipped`.
 */
export interface GroupMigrationReport {
  /** Whether nothing was written. */
  readonly dryRun: boolean;
  /** The source group. */
  readonly fromGroup: string;
  /** The target group. */
  readonly toGroup: string;
  /**
   * Each changed semaphore (or each that would change, in a dry run), by name, with its group pattern before (`from`)
   * and after (`to`): for an undo, `to` is the pattern restored.
   */
  readonly changes: Array<{ readonly name: string; readonly from: string; readonly to: string }>;
  /**
   * Selected semaphores left alone, each with its unchanged group pattern and why: regex patterns unless included,
   * named ones not concerned; for an undo, edited since their migration, migrated between other groups, or (when
   * named) never migrated. `code` is for scripts (see {@link MigrationSkipCode}; `REMOVED` when it was removed while
   * the migration ran), `reason` for people.
   */
  readonly skipped: Array<{ readonly name: string; readonly groupPattern: string; readonly code: MigrationSkipCode | 'REMOVED'; readonly reason: string }>;
  /**
   * The target group's known live nodes: the acquirers holding a live permit in it. Until cluster membership is
   * known, an idle node of that group is not seen, so an empty list is a warning, not proof.
   */
  readonly target: { readonly group: string; readonly liveNodes: string[] };
  /** Whether the request was forced (see {@link GroupMigrationRequest.force}). */
  readonly forced: boolean;
  /** What the operator should check, e.g. that no live node is known in the target group. */
  readonly warnings: string[];
}

/** What an undo reports: the part of a migration's report that an undo has. */
export type UndoMigrationReport = Pick<GroupMigrationReport, 'dryRun' | 'changes' | 'skipped'>;
type MigrationChange = GroupMigrationReport['changes'][number];
type MigrationSkip = GroupMigrationReport['skipped'][number];

/**
 * Group migrations, the operator's move of jobs from one group to another and its undo: which semaphores a request
 * selects, the plan for each (`group-migration.rules.ts`), and one compare-and-set per change through the
 * {@link SemaphoreEdits} of the {@link SemaphoreAdmin} that owns this, re-planned on the definition read at each attempt.
 */
export class GroupMigrations {
  constructor(
    private readonly store: PermitStore,
    private readonly clock: Clock,
    private readonly edits: SemaphoreEdits,
    private readonly editTimeoutMs: number,
    private readonly knownLive?: () => Promise<ReadonlyArray<{ readonly acquirer: string; readonly group: string }> | undefined>,
  ) {}

  /**
   * The group migration. Of the selected semaphores (`names` and/or `namePattern`; neither: all), moves those
   * whose group pattern is a list of group names containing `fromGroup`: that name is replaced by `toGroup`
   * (`production|staging` → `dr-site|staging`). A regex pattern that admits `fromGroup` (`.*`, `prod.*`) may admit
   * other groups too: it is skipped, and reported, unless `includeWildcards` (then it becomes `toGroup`). Each
   * moved definition remembers the pattern it had, for {@link GroupMigrations.undoMigration}. The holders of moved jobs let go at
   * their next refresh. Also reports which nodes are known live in `toGroup` (today: those holding a live permit
   * there) and warns when there is none. Only jobs move: the semaphores of elections and allocations are never
   * selected (naming one is refused); one whose group pattern lists `fromGroup` gets a warning saying how to move it. Validated before anything is read (a bad request throws
   * {@link InvalidInputError}, a named semaphore that does not exist {@link NotFoundError}); reads the
   * cluster, not this node's view; each change is its own compare-and-set, re-decided on conflict.
   */
  async migrateGroups(request: GroupMigrationRequest): Promise<GroupMigrationReport> {
    const r = validateMigrationRequest(request);
    const listed = await this.store.list({ timeoutMs: this.editTimeoutMs });
    const definitions = this.selected(listed, r);
    const present = await this.liveInstances();
    const target = present
      ? knownInstances(present, r.toGroup)
      : liveNodes(listed, r.toGroup, this.clock.now());
    const moves = definitions.some(({ definition, named }) => planMove(definition, r.fromGroup, r.toGroup, { includeWildcards: r.includeWildcards, named }).kind === 'move');
    const refused = present !== undefined && target.liveNodes.length === 0 && moves && !r.force;
    if (refused && !r.dryRun) {
      throw invalidDefinition(undefined, 'toGroup', emptyTarget(r.toGroup, target.liveGroups, 'refused: pass force to move the jobs there anyway'), 'migration');
    }
    const changes: MigrationChange[] = [];
    const skipped: MigrationSkip[] = [];
    for (const { definition, named } of definitions) {
      const options = { includeWildcards: r.includeWildcards, named };
      const plan = planMove(definition, r.fromGroup, r.toGroup, options);
      if (plan.kind === 'skip') skipped.push({ name: definition.name, groupPattern: definition.groupPattern, code: plan.code, reason: plan.reason });
      if (plan.kind !== 'move') continue;
      if (r.dryRun) {
        changes.push({ name: definition.name, from: definition.groupPattern, to: plan.to });
        continue;
      }
      const done = await this.editPattern(definition.name, (current) => {
        const again = planMove(current, r.fromGroup, r.toGroup, options);
        if (again.kind !== 'move') return again;
        return { ...current, groupPattern: again.to, migratedFrom: migrationMemory(current, r.fromGroup, r.toGroup, this.clock.now()) };
      });
      if ('code' in done) skipped.push({ name: definition.name, groupPattern: done.groupPattern, code: done.code, reason: done.reason });
      else changes.push(done);
    }
    const warnings = leftBehind(listed, r);
    if (target.liveNodes.length === 0 && changes.length > 0) {
      const verdict = r.force
        ? 'forced'
        : refused
          ? 'a real run is refused without force'
          : 'live instances are not known here (membership off, or not reachable): only permit holders were checked';
      warnings.push(emptyTarget(r.toGroup, target.liveGroups, verdict));
    }
    return {
      dryRun: r.dryRun,
      fromGroup: r.fromGroup,
      toGroup: r.toGroup,
      changes,
      skipped,
      target: { group: r.toGroup, liveNodes: target.liveNodes },
      forced: r.force,
      warnings,
    };
  }

  /**
   * Puts back the group pattern each selected semaphore's last migration replaced (`names` and/or `namePattern`;
   * neither: every semaphore that remembers one; `fromGroup`/`toGroup`: only migrations between those groups), and
   * forgets the migration. A semaphore whose group pattern was edited after its migration is skipped and reported,
   * never overwritten. Validated like {@link migrateGroups}; each change is its own compare-and-set.
   */
  async undoMigration(request: UndoMigrationRequest = {}): Promise<UndoMigrationReport> {
    const r = validateUndoRequest(request);
    const filter = { fromGroup: r.fromGroup, toGroup: r.toGroup };
    const definitions = this.selected(await this.store.list({ timeoutMs: this.editTimeoutMs }), r);
    const changes: MigrationChange[] = [];
    const skipped: MigrationSkip[] = [];
    for (const { definition, named } of definitions) {
      const plan = planUndo(definition, filter);
      if (plan.kind === 'skip' && (named || plan.code !== 'NOT_MIGRATED')) {
        skipped.push({ name: definition.name, groupPattern: definition.groupPattern, code: plan.code, reason: plan.reason });
      }
      if (plan.kind !== 'move') continue;
      if (r.dryRun) {
        changes.push({ name: definition.name, from: definition.groupPattern, to: plan.to });
        continue;
      }
      const done = await this.editPattern(definition.name, (current) => {
        const again = planUndo(current, filter);
        if (again.kind !== 'move') return again;
        const { migratedFrom: _undone, ...rest } = current;
        return { ...rest, groupPattern: again.to };
      });
      if ('code' in done) skipped.push({ name: definition.name, groupPattern: done.groupPattern, code: done.code, reason: done.reason });
      else changes.push(done);
    }
    return { dryRun: r.dryRun, changes, skipped };
  }

  /** The selected definitions, sorted by name; a named semaphore that does not exist is rejected before any write. */
  private selected(
    listed: Array<{ name: string; entry: SemaphoreEntry }>,
    selection: { names: string[]; namePattern?: string },
  ): Array<{ definition: SemaphoreDefinition; named: boolean }> {
    const defined = new Map(listed.flatMap(({ name, entry }) => (entry.definition ? [[name, entry.definition] as const] : [])));
    const missing = selection.names.find((name) => !defined.has(name));
    if (missing !== undefined) throw unknownSemaphore(missing);
    return [...defined.values()].flatMap((definition) => {
      if (semaphoreKind(definition.name) !== 'job') return []; // migrations move jobs: elections and allocations are edited apart
      const { selected, named } = selects(selection, definition.name);
      return selected ? [{ definition, named }] : [];
    });
  }

  /**
   * Changes one definition's group pattern by compare-and-set, re-deciding on the definition read at each
   * attempt: `decide` returns the new definition, or the plan that says why it is left alone.
   */
  private async editPattern(name: string, decide: (current: SemaphoreDefinition) => SemaphoreDefinition | MovePlan): Promise<MigrationChange | MigrationSkip> {
    let outcome!: MigrationChange | MigrationSkip;
    await this.edits.edit(name, (current) => {
      if (!current) {
        outcome = { name, groupPattern: '', code: 'REMOVED', reason: 'removed meanwhile' };
        return undefined;
      }
      const next = decide(current);
      if ('kind' in next) {
        outcome = next.kind === 'skip'
          ? { name, groupPattern: current.groupPattern, code: next.code, reason: next.reason }
          : { name, groupPattern: current.groupPattern, code: 'NOT_ADMITTED', reason: 'edited meanwhile: no longer concerned' };
        return undefined;
      }
      outcome = { name, from: current.groupPattern, to: next.groupPattern };
      return next;
    });
    return outcome;
  }

  /** The live instances if presence knows them; an empty answer means presence is not in use, so unknown. */
  private async liveInstances(): Promise<ReadonlyArray<{ acquirer: string; group: string }> | undefined> {
    const present = await this.knownLive?.().catch(() => undefined);
    return present && present.length > 0 ? present : undefined;
  }

}

/**
 * The semaphores of elections and allocations a migration would have moved were they jobs (selected, their group
 * pattern lists the source group): left alone, each with a warning saying how to move it, since a move of every
 * job to a site that loses its leader or its allocation is rarely what was meant. The others are not mentioned.
 */
function leftBehind(listed: Array<{ name: string; entry: SemaphoreEntry }>, r: { fromGroup: string; toGroup: string; names: string[]; namePattern?: string }): string[] {
  return listed.flatMap(({ name, entry }) => {
    const kind = semaphoreKind(name);
    if (kind === 'job' || !entry.definition || !selects(r, name).selected) return [];
    const plan = planMove(entry.definition, r.fromGroup, r.toGroup);
    if (plan.kind !== 'move') return [];
    return [`semaphore "${name}" lists group "${r.fromGroup}" and was left alone: ${migrationRefusal(name, kind, plan.to)}`];
  });
}

/** The live instances of `group` by name, and every group that has one (presence). */
function knownInstances(present: ReadonlyArray<{ acquirer: string; group: string }>, group: string): { liveNodes: string[]; liveGroups: string[] } {
  return {
    liveNodes: [...new Set(present.filter((p) => p.group === group).map((p) => p.acquirer))].sort(),
    liveGroups: [...new Set(present.map((p) => p.group))].sort(),
  };
}

function emptyTarget(group: string, liveGroups: string[], verdict: string): string {
  const others = liveGroups.length ? `groups with live nodes: ${liveGroups.join(', ')}` : 'no live node in any group';
  return `no live node is known in group "${group}" (${others}): the moved jobs would stop until a node of that group asks ` +
    `for them; check the group name (${verdict})`;
}

/**
 * The acquirers holding an unexpired permit in `group` (each was alive within its permit's duration), and every
 * group that has such a holder. Until cluster membership is known, this is all the store can tell of live nodes.
 */
function liveNodes(listed: Array<{ entry: SemaphoreEntry }>, group: string, now: number): { liveNodes: string[]; liveGroups: string[] } {
  const holders = listed.flatMap(({ entry }) => livePermits(entry.permits, now));
  return {
    liveNodes: [...new Set(holders.filter((p) => p.group === group).map((p) => p.acquirer))].sort(),
    liveGroups: [...new Set(holders.map((p) => p.group))].sort(),
  };
}
