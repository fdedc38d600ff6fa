import { EditConflictError } from '../core/errors/edit-conflict.error';
import { InvalidDefinitionError } from '../core/errors/invalid-definition.error';
import { UnknownSemaphoreError } from './errors/unknown-semaphore.error';
import type { Clock } from '../core/clock';
import { toDefinitionInput, validateDefinition, validateSemaphoreName } from './definition.validator';
import { decideRevoke } from './permit.rules';
import { livePermits } from './permit';
import { seedRevision, type SemaphoreEntry } from './semaphore-entry';
import type { SemaphoreDefinition, SemaphoreDefinitionInput } from './semaphore-definition';
import { compareAndSetLoop, type Attempt } from './compare-and-set.loop';
import { Deadline } from '../core/deadline';
import type { SemaphoreStatus } from './semaphore-status';
import type { PermitStore, VersionedEntry } from './permit-store';
import { decodeEntry } from './semaphore-entry.codec';
import { checkKindEdit, migrationRefusal, semaphoreKind, type KindGuardOptions } from './semaphore-kind';
import {
  carryMigrationMemory, migrationMemory, planMove, planUndo, selects, validateMigrationRequest, validateUndoRequest,
  type GroupMigrationRequest, type MigrationSkipCode, type MovePlan, type UndoMigrationRequest,
} from './group-migration.rules';

export type { GroupMigrationRequest, MigrationSelection, MigrationSkipCode, UndoMigrationRequest } from './group-migration.rules';

/** A change to a definition: any field but the name. */
export type SemaphoreDefinitionPatch = Partial<Omit<SemaphoreDefinitionInput, 'name'>>;

/** One definition a migration changes (or would change, in a dry run). */
export interface MigrationChange {
  /** The semaphore. */
  readonly name: string;
  /** Its group pattern before. */
  readonly from: string;
  /** Its group pattern after. */
  readonly to: string;
}

/** A selected semaphore a migration or undo left alone, and why. */
export interface MigrationSkip {
  /** The semaphore. */
  readonly name: string;
  /** Its group pattern, unchanged. */
  readonly groupPattern: string;
  /** Why, for scripts: see {@link MigrationSkipCode}; `REMOVED` when it was removed while the migration ran. */
  readonly code: MigrationSkipCode | 'REMOVED';
  /** Why, for people. */
  readonly reason: string;
}

/** What {@link GatekeeperService.migrateGroups} did (or, in a dry run, would do). */
export interface GroupMigrationReport {
  /** Whether nothing was written. */
  readonly dryRun: boolean;
  /** The source group. */
  readonly fromGroup: string;
  /** The target group. */
  readonly toGroup: string;
  /** Each moved semaphore with its group pattern before and after, by name. */
  readonly changes: MigrationChange[];
  /** Selected semaphores left alone, with the reason (regex patterns unless included; named ones not concerned). */
  readonly skipped: MigrationSkip[];
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

/** What {@link GatekeeperService.undoMigration} did (or, in a dry run, would do). */
export interface UndoMigrationReport {
  /** Whether nothing was written. */
  readonly dryRun: boolean;
  /** Each restored semaphore: `from` is its pattern before the undo, `to` the one restored. */
  readonly changes: MigrationChange[];
  /**
   * Selected semaphores left alone, with the reason: edited since their migration, migrated between other groups,
   * or (when named) never migrated.
   */
  readonly skipped: MigrationSkip[];
}

/** Tuning of a `SemaphoreAdmin`. */
export interface SemaphoreAdminOptions {
  /** The clock-skew bound the nodes use, in ms (recovery waits add twice this). Default 0. */
  clockSkewMs?: number;
  /** Deadline of one edit, all attempts included. Default 10 s. */
  editTimeoutMs?: number;
  /** Compare-and-set attempts of one edit before it is rejected with {@link EditConflictError}. Default 32. */
  maxAttempts?: number;
  /**
   * Who is here (presence): the live app instances, or `undefined` when that is not known right now. When it is
   * known, a migration to a group with no live instance is refused unless forced; otherwise the live permit
   * holders stand in for it, and an empty target is only a warning.
   */
  liveInstances?: () => Promise<ReadonlyArray<{ readonly acquirer: string; readonly group: string }> | undefined>;
}

/** What an edit does to the definition it read: the new definition, or `undefined` to leave the entry alone. */
type DefinitionChange = (current: SemaphoreDefinition | undefined) => SemaphoreDefinition | null | undefined;

/**
 * Operator actions on definitions and permits, shared by `GatekeeperService`, the admin HTTP API and the CLI.
 * Every edit is validated before anything is written and is a compare-and-set on the semaphore's entry,
 * retried on conflict: concurrent edits are all applied, or rejected with {@link EditConflictError}, never lost.
 * Taking a permit away (force-release, reset) revokes it: its holder is told and lets go, and its slot stays
 * taken until then or until it expires, so nobody else is granted while the old holder may still act.
 */
export class SemaphoreAdmin {
  private readonly skewMs: number;
  private readonly editTimeoutMs: number;
  private readonly maxAttempts: number;

  constructor(
    private readonly store: PermitStore,
    private readonly clock: Clock,
    private readonly options: SemaphoreAdminOptions = {},
  ) {
    this.skewMs = options.clockSkewMs ?? 0;
    this.editTimeoutMs = options.editTimeoutMs ?? 10_000;
    this.maxAttempts = options.maxAttempts ?? 32;
  }

  /** Every definition this node knows (its view of the cluster), sorted by name. */
  list(): SemaphoreDefinition[] {
    return this.store.known().flatMap(({ entry }) => (entry.definition ? [entry.definition] : []));
  }

  /** The definition as stored now. Throws {@link UnknownSemaphoreError} if there is none. */
  async get(name: string): Promise<SemaphoreDefinition> {
    const read = await this.store.read(validateSemaphoreName(name), { timeoutMs: this.editTimeoutMs });
    if (!read.entry?.definition) throw new UnknownSemaphoreError(name);
    return read.entry.definition;
  }

  /**
   * Creates or replaces a definition. Creating an election's or allocation's semaphore, or changing its permits,
   * needs `force` (see {@link KindGuardOptions}).
   */
  async put(input: SemaphoreDefinitionInput, options: KindGuardOptions = {}): Promise<SemaphoreDefinition> {
    const definition = validateDefinition(input);
    let stored = definition;
    await this.edit(definition.name, (current) => {
      checkKindEdit(definition.name, 'permits', current?.permits, definition.permits, options);
      return (stored = carryMigrationMemory(current, definition, this.clock.now()));
    });
    return stored;
  }

  /**
   * Creates a definition unless one exists (with `overwrite`, replaces it). Returns whether it wrote. An entry
   * that may have been lost is rebuilt with a recovery wait of `graceDurationMs` (default: the definition's
   * duration) plus twice the skew bound before its first grant.
   */
  async define(definition: SemaphoreDefinition, { overwrite = false, graceDurationMs }: { overwrite?: boolean; graceDurationMs?: number } = {}): Promise<boolean> {
    return this.edit(
      definition.name,
      (current) => (current && !overwrite ? undefined : carryMigrationMemory(current, definition, this.clock.now())),
      graceDurationMs,
    );
  }

  /** Changes some fields of an existing definition; an election's or allocation's permits only with `force`. */
  async update(name: string, patch: SemaphoreDefinitionPatch, options: KindGuardOptions = {}): Promise<SemaphoreDefinition> {
    if (patch === null || typeof patch !== 'object') {
      throw new InvalidDefinitionError(name, 'definition', 'an update must be an object of fields');
    }
    if ('name' in patch) throw new InvalidDefinitionError(name, 'name', 'cannot be changed by an update');
    const existing = await this.get(name); // validates the patch before the first write, naming the field
    validateDefinition({ ...toDefinitionInput(existing), ...patch, name });
    let updated!: SemaphoreDefinition;
    await this.edit(name, (current) => {
      if (!current) throw new UnknownSemaphoreError(name);
      const next = validateDefinition({ ...toDefinitionInput(current), ...patch, name });
      checkKindEdit(name, 'permits', current.permits, next.permits, options);
      // A paused semaphore edited while still paused (e.g. migrated) keeps what resume should restore.
      const paused = next.permits === 0 && current.pausedFrom ? { ...next, pausedFrom: current.pausedFrom } : next;
      // The memory of a migration is kept while the group pattern stays the one it wrote, marked edited otherwise.
      updated = carryMigrationMemory(current, paused, this.clock.now());
      return updated;
    });
    return updated;
  }

  /** Removes a definition; returns whether it existed. Its holders let go at their next refresh; tokens are kept. */
  remove(name: string): Promise<boolean> {
    return this.edit(validateSemaphoreName(name), (current) => (current ? null : undefined));
  }

  /**
   * Sets permits to 0 everywhere, remembering the current count for {@link resume}. An election's or allocation's
   * semaphore only with `force`.
   */
  async pause(name: string, options: KindGuardOptions = {}): Promise<SemaphoreDefinition> {
    let paused!: SemaphoreDefinition;
    await this.edit(validateSemaphoreName(name), (current) => {
      if (!current) throw new UnknownSemaphoreError(name);
      checkKindEdit(name, 'pause', current.permits, 0, options);
      paused = current.permits === 0 ? current : { ...current, permits: 0, pausedFrom: current.permits };
      return paused === current ? undefined : paused;
    });
    return paused;
  }

  /**
   * Restores the permits a {@link pause} took away (or `permits`, or 1 if the pause did not remember any). An
   * election's or allocation's semaphore only with `force`.
   */
  async resume(name: string, permits?: number, options: KindGuardOptions = {}): Promise<SemaphoreDefinition> {
    let resumed!: SemaphoreDefinition;
    await this.edit(validateSemaphoreName(name), (current) => {
      if (!current) throw new UnknownSemaphoreError(name);
      const next = validateDefinition({ ...toDefinitionInput(current), permits: permits ?? current.pausedFrom ?? (current.permits || 1) });
      checkKindEdit(name, 'resume', current.permits, next.permits, options);
      resumed = carryMigrationMemory(current, next, this.clock.now());
      return resumed;
    });
    return resumed;
  }

  /** The live instances if presence knows them; an empty answer means presence is not in use, so unknown. */
  private async liveInstances(): Promise<ReadonlyArray<{ acquirer: string; group: string }> | undefined> {
    const present = await this.options.liveInstances?.().catch(() => undefined);
    return present && present.length > 0 ? present : undefined;
  }

  /**
   * Moves jobs from one group to another (see {@link migrateGroups}) and returns what it changed. Kept for
   * `GatekeeperService.migrate`; {@link migrateGroups} also says what it skipped and warns of an empty target.
   */
  async migrate(fromGroup: string, toGroup: string, options: Omit<GroupMigrationRequest, 'fromGroup' | 'toGroup'> = {}): Promise<MigrationChange[]> {
    return (await this.migrateGroups({ ...options, fromGroup, toGroup })).changes;
  }

  /**
   * The group migration. Of the selected semaphores (`names` and/or `namePattern`; neither: all), moves those
   * whose group pattern is a list of group names containing `fromGroup`: that name is replaced by `toGroup`
   * (`production|staging` → `dr-site|staging`). A regex pattern that admits `fromGroup` (`.*`, `prod.*`) may admit
   * other groups too: it is skipped, and reported, unless `includeWildcards` (then it becomes `toGroup`). Each
   * moved definition remembers the pattern it had, for {@link undoMigration}. The holders of moved jobs let go at
   * their next refresh. Also reports which nodes are known live in `toGroup` (today: those holding a live permit
   * there) and warns when there is none. Only jobs move: the semaphores of elections and allocations are never
   * selected (naming one is refused); one whose group pattern lists `fromGroup` gets a warning saying how to move it. Validated before anything is read (a bad request throws
   * {@link InvalidDefinitionError}, a named semaphore that does not exist {@link UnknownSemaphoreError}); reads the
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
      throw new InvalidDefinitionError(undefined, 'toGroup', emptyTarget(r.toGroup, target.liveGroups, 'refused: pass force to move the jobs there anyway'), 'migration');
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
    if (missing !== undefined) throw new UnknownSemaphoreError(missing);
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
    await this.edit(name, (current) => {
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

  /** Every semaphore in the cluster with its definition, live permits and last fencing token. */
  async permits(): Promise<SemaphoreStatus[]> {
    const now = this.clock.now();
    return (await this.store.list({ timeoutMs: this.editTimeoutMs })).map(({ name, entry }) => ({
      name,
      definition: entry.definition ?? undefined,
      permits: livePermits(entry.permits, now),
      lastToken: entry.lastToken > 0 ? entry.lastToken : undefined,
      recoveringUntil: entry.graceUntil !== undefined && entry.graceUntil + this.skewMs > now ? entry.graceUntil + this.skewMs : undefined,
    }));
  }

  /**
   * Takes the live permit with `fencingToken` of `semaphore` away, whoever holds it; returns whether there was
   * one. Its holder is told (its running job's signal fires) and lets go; until then, or until the permit
   * expires, nobody else is granted it.
   */
  async forceRelease(semaphore: string, fencingToken: number): Promise<boolean> {
    if (!Number.isSafeInteger(fencingToken)) {
      throw new InvalidDefinitionError(semaphore, 'fencingToken', `must be a whole number, got ${String(fencingToken)}`);
    }
    return this.revoke(validateSemaphoreName(semaphore), fencingToken);
  }

  /**
   * Operator repair: takes every permit of `semaphore` away (revoked, as with {@link forceRelease}); fencing tokens
   * keep growing. An entry that cannot be read is rebuilt from what this node remembers of its definition (else
   * `definition`), and nothing is granted under it until every permit it could have held has expired.
   */
  async resetPermits(
    semaphore: string,
    { graceDurationMs, definition }: { graceDurationMs?: number; definition?: SemaphoreDefinition } = {},
  ): Promise<void> {
    const name = validateSemaphoreName(semaphore);
    const raw = await this.store.readRaw(name, { timeoutMs: this.editTimeoutMs });
    let readable = true;
    try {
      if (raw !== null) decodeEntry(name, raw);
    } catch {
      readable = false;
    }
    if (readable) {
      await this.revoke(name, 'all');
      return;
    }
    const now = this.clock.now();
    const remembered = this.store.remembered(name);
    const known = remembered?.definition ?? definition ?? null;
    const waitMs = Math.max(graceDurationMs ?? 0, known?.durationMs ?? 0, ...this.list().map((d) => d.durationMs));
    const revision = seedRevision(now, remembered?.revision, this.skewMs);
    const rebuilt: SemaphoreEntry = { revision, writeId: '', definition: known, lastToken: 0, permits: [], graceUntil: now + waitMs + 2 * this.skewMs };
    if (!(await this.store.compareAndSet(name, { raw }, rebuilt, { timeoutMs: this.editTimeoutMs }))) {
      throw new EditConflictError(name, 1);
    }
  }

  private async revoke(name: string, token: number | 'all'): Promise<boolean> {
    const outcome = await this.loop(name, (read) => {
      const decision = decideRevoke(read.entry, token, this.clock.now(), this.skewMs);
      const write = decision.next && read.entry ? { ...read.entry, revision: read.entry.revision + 1, ...decision.next } : undefined;
      return { result: decision.outcome, write };
    });
    return outcome === 'revoked';
  }

  /**
   * Applies `change` to the definition by compare-and-set, re-reading and re-applying it on conflict. Creating an
   * entry (none, or one that may have been lost) seeds its revision above anything seen and, where its partition
   * lost data recently, sets the recovery wait. Returns whether anything was written.
   */
  private edit(name: string, change: DefinitionChange, graceDurationMs?: number): Promise<boolean> {
    return this.loop(name, (read) => {
      const current = read.entry?.definition ?? undefined;
      const next = change(current);
      if (next === undefined || (next === null && !read.entry)) return { result: false };
      if (read.entry) return { result: true, write: { ...read.entry, revision: read.entry.revision + 1, definition: next } };
      return { result: true, write: this.created(name, next, read, graceDurationMs) };
    });
  }

  private created(name: string, definition: SemaphoreDefinition | null, read: VersionedEntry, graceDurationMs?: number): Omit<SemaphoreEntry, 'writeId'> {
    const now = this.clock.now();
    const remembered = this.store.remembered(name);
    const revision = seedRevision(now, remembered?.revision, this.skewMs);
    const entry = { revision, definition, lastToken: 0, permits: [] };
    // Nothing removes an entry, so one this node remembers and cannot find was lost, whatever its partition's
    // canary says: a canary marked fresh after the loss (a restarted cluster declared new before this node came
    // back) must not cut the wait of a permit this node saw. Counted from now: the loss was no later.
    const lostSince = read.lostSince ?? (remembered ? now : undefined);
    if (lostSince === undefined) return entry;
    const waitMs = Math.max(graceDurationMs ?? 0, definition?.durationMs ?? 0, remembered?.definition?.durationMs ?? 0);
    const graceUntil = lostSince + waitMs + 2 * this.skewMs;
    if (graceUntil <= now) return entry;
    return { ...entry, graceUntil, rebuilt: { lostSince, fromRevision: remembered?.revision ?? 0 } };
  }

  /**
   * While a rebuilt entry waits out the lost one's permits, brings in what this node knows better than its
   * rebuilder did: a longer duration extends the wait, a newer definition (by the revision it was seen at)
   * replaces the one put back. Returns whether it wrote.
   */
  async converge(name: string, known: { definition: SemaphoreDefinition | null; revision: number; longestMs: number }): Promise<boolean> {
    return this.loop(name, (read) => {
      const entry = read.entry;
      const now = this.clock.now();
      if (!entry?.rebuilt || entry.graceUntil === undefined || entry.graceUntil <= now) return { result: false };
      const graceUntil = Math.max(entry.graceUntil, entry.rebuilt.lostSince + known.longestMs + 2 * this.skewMs);
      const newer = known.revision > entry.rebuilt.fromRevision;
      if (graceUntil === entry.graceUntil && !newer) return { result: false };
      const write = {
        ...entry,
        revision: entry.revision + 1,
        graceUntil,
        ...(newer && { definition: known.definition, rebuilt: { ...entry.rebuilt, fromRevision: known.revision } }),
      };
      return { result: true, write };
    });
  }

  private async loop<R>(name: string, decide: (read: VersionedEntry) => Attempt<R>): Promise<R> {
    const deadline = new Deadline(this.editTimeoutMs, `Semaphore "${name}": edit`);
    const result = await compareAndSetLoop(this.store, name, (read) => {
      const attempt = decide(read);
      return { ...attempt, result: { value: attempt.result } };
    }, { maxAttempts: this.maxAttempts, deadline });
    if (!result) throw new EditConflictError(name, this.maxAttempts);
    return result.value;
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
