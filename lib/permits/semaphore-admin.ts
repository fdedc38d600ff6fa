import { EditConflictError } from '../core/errors/edit-conflict.error';
import type { Clock } from '../core/clock';
import { checkDurationOverSkew, checkDurationOverTick, type HeldTick, toDefinitionInput, validateDefinition, validateSemaphoreName } from './definition.validator';
import { carryMigrationMemory, type GroupMigrationRequest, type UndoMigrationRequest } from './group-migration.rules';
import { GroupMigrations, type GroupMigrationReport, type UndoMigrationReport } from './group-migrations';
import { livePermits } from './permit.rules';
import type { PermitStore } from './permit-store';
import type { SemaphoreDefinition, SemaphoreDefinitionInput } from './semaphore-definition';
import { SemaphoreEdits } from './semaphore-edits';
import { seedRevision, type SemaphoreEntry } from './semaphore-entry';
import { decodeEntry } from './semaphore-entry.codec';
import { checkKindEdit, type KindGuardOptions } from './semaphore-kind';
import type { SemaphoreStatus } from './semaphore-status';
import { invalidDefinition } from '../core/errors/input.errors';
import { unknownSemaphore } from './errors/semaphore.errors';


/** A change to a definition: any field but the name. */
export type SemaphoreDefinitionPatch = Partial<Omit<SemaphoreDefinitionInput, 'name'>>;

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
  /**
   * The shortest tick of the jobs this node runs on a semaphore in hold mode, if any: an edit to a shorter duration
   * is refused unless forced. Absent (the CLI, which has no jobs): not checked.
   */
  heldTick?: (semaphore: string) => HeldTick | undefined;
}

/**
 * Operator actions on definitions and permits, shared by `SemaphoreAdminService`, the admin HTTP API and the CLI.
 * The writes go through {@link SemaphoreEdits}; group migrations are {@link GroupMigrations}'.
 * Every edit is validated before anything is written and is a compare-and-set on the semaphore's entry,
 * retried on conflict: concurrent edits are all applied, or rejected with {@link EditConflictError}, never lost.
 * Taking a permit away (force-release, reset) revokes it: its holder is told and lets go, and its slot stays
 * taken until then or until it expires, so nobody else is granted while the old holder may still act.
 */
export class SemaphoreAdmin {
  private readonly skewMs: number;
  private readonly editTimeoutMs: number;
  /** The write path of every edit (start-up's definitions and recoveries write through it directly). */
  readonly edits: SemaphoreEdits;
  private readonly migrations: GroupMigrations;
  private readonly heldTick: (semaphore: string) => HeldTick | undefined;

  constructor(
    private readonly store: PermitStore,
    private readonly clock: Clock,
    options: SemaphoreAdminOptions = {},
  ) {
    this.skewMs = options.clockSkewMs ?? 0;
    this.editTimeoutMs = options.editTimeoutMs ?? 10_000;
    this.heldTick = options.heldTick ?? (() => undefined);
    this.edits = new SemaphoreEdits(store, clock, { skewMs: this.skewMs, editTimeoutMs: this.editTimeoutMs, maxAttempts: options.maxAttempts ?? 32 });
    this.migrations = new GroupMigrations(store, clock, this.edits, this.editTimeoutMs, options.liveInstances);
  }

  /** Every definition this node knows (its view of the cluster), sorted by name. */
  list(): SemaphoreDefinition[] {
    return this.store.known().flatMap(({ entry }) => (entry.definition ? [entry.definition] : []));
  }

  /** The definition as stored now. Throws {@link NotFoundError} if there is none. */
  async get(name: string): Promise<SemaphoreDefinition> {
    const definition = await this.edits.current(validateSemaphoreName(name));
    if (!definition) throw unknownSemaphore(name);
    return definition;
  }

  /**
   * Creates or replaces a definition. Creating an election's or allocation's semaphore, or changing its permits,
   * needs `force` (see {@link KindGuardOptions}).
   */
  async put(input: SemaphoreDefinitionInput, options: KindGuardOptions = {}): Promise<SemaphoreDefinition> {
    const definition = validateDefinition(input);
    checkDurationOverSkew(definition, this.skewMs, options);
    const tick = this.heldTick(definition.name);
    let stored = definition;
    await this.edits.edit(definition.name, (current) => {
      checkKindEdit(definition.name, 'permits', current?.permits, definition.permits, options);
      checkDurationOverTick(definition, current?.durationMs, tick, options);
      return (stored = carryMigrationMemory(current, definition, this.clock.now()));
    });
    return stored;
  }

  /** Creates a definition unless one exists (with `overwrite`, replaces it); see {@link SemaphoreEdits.define}. */
  define(definition: SemaphoreDefinition, options: { overwrite?: boolean; graceDurationMs?: number } = {}): Promise<boolean> {
    return this.edits.define(definition, options);
  }

  /** Changes some fields of an existing definition; an election's or allocation's permits only with `force`. */
  async update(name: string, patch: SemaphoreDefinitionPatch, options: KindGuardOptions = {}): Promise<SemaphoreDefinition> {
    validateSemaphoreName(name);
    if (patch === null || typeof patch !== 'object') {
      throw invalidDefinition(name, 'definition', 'an update must be an object of fields');
    }
    if ('name' in patch) throw invalidDefinition(name, 'name', 'cannot be changed by an update');
    const existing = await this.get(name); // validates the patch before the first write, naming the field
    const patched = validateDefinition({ ...toDefinitionInput(existing), ...patch, name });
    if ('duration' in patch) checkDurationOverSkew(patched, this.skewMs, options);
    const tick = 'duration' in patch ? this.heldTick(name) : undefined;
    let updated!: SemaphoreDefinition;
    await this.edits.edit(name, (current) => {
      if (!current) throw unknownSemaphore(name);
      const next = validateDefinition({ ...toDefinitionInput(current), ...patch, name });
      checkKindEdit(name, 'permits', current.permits, next.permits, options);
      checkDurationOverTick(next, current.durationMs, tick, options);
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
    return this.edits.edit(validateSemaphoreName(name), (current) => (current ? null : undefined));
  }

  /**
   * Sets permits to 0 everywhere, remembering the current count for {@link resume}. An election's or allocation's
   * semaphore only with `force`.
   */
  async pause(name: string, options: KindGuardOptions = {}): Promise<SemaphoreDefinition> {
    let paused!: SemaphoreDefinition;
    await this.edits.edit(validateSemaphoreName(name), (current) => {
      if (!current) throw unknownSemaphore(name);
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
    await this.edits.edit(validateSemaphoreName(name), (current) => {
      if (!current) throw unknownSemaphore(name);
      const next = validateDefinition({ ...toDefinitionInput(current), permits: permits ?? current.pausedFrom ?? (current.permits || 1) });
      checkKindEdit(name, 'resume', current.permits, next.permits, options);
      resumed = carryMigrationMemory(current, next, this.clock.now());
      return resumed;
    });
    return resumed;
  }

  /**
   * Moves jobs from one group to another (see {@link migrateGroups}) and returns what it changed. Kept for
   * `SemaphoreAdminService.migrate`; {@link migrateGroups} also says what it skipped and warns of an empty target.
   */
  async migrate(fromGroup: string, toGroup: string, options: Omit<GroupMigrationRequest, 'fromGroup' | 'toGroup'> = {}): Promise<GroupMigrationReport['changes']> {
    return (await this.migrateGroups({ ...options, fromGroup, toGroup })).changes;
  }

  /**
   * The group migration: moves the selected jobs whose group pattern lists `fromGroup` to `toGroup`, and reports
   * what it changed, skipped and warns of (see {@link GroupMigrations.migrateGroups}).
   */
  migrateGroups(request: GroupMigrationRequest): Promise<GroupMigrationReport> {
    return this.migrations.migrateGroups(request);
  }

  /** Puts back the group patterns migrations replaced (see {@link GroupMigrations.undoMigration}). */
  undoMigration(request: UndoMigrationRequest = {}): Promise<UndoMigrationReport> {
    return this.migrations.undoMigration(request);
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
    const name = validateSemaphoreName(semaphore);
    if (!Number.isSafeInteger(fencingToken)) {
      throw invalidDefinition(name, 'fencingToken', `must be a whole number, got ${String(fencingToken)}`);
    }
    return this.edits.revoke(name, fencingToken);
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
      await this.edits.revoke(name, 'all');
      return;
    }
    const now = this.clock.now();
    const remembered = this.store.remembered(name);
    const known = remembered?.definition ?? definition ?? null;
    const waitMs = Math.max(graceDurationMs ?? 0, known?.durationMs ?? 0, ...this.list().map((d) => d.durationMs));
    const revision = seedRevision(now, remembered?.revision, this.skewMs);
    const rebuilt: SemaphoreEntry = { revision, writeId: this.store.writeId?.() ?? '', definition: known, lastToken: 0, permits: [], graceUntil: now + waitMs + 2 * this.skewMs };
    if (!(await this.store.compareAndSet(name, { raw }, rebuilt, { timeoutMs: this.editTimeoutMs }))) {
      throw new EditConflictError('semaphore', name, 1);
    }
  }

  /**
   * While a rebuilt entry waits out the lost one's permits, brings in what this node knows better than its
   * rebuilder did: a longer duration extends the wait, a newer definition (by the revision it was seen at)
   * replaces the one put back. Returns whether it wrote.
   */
  converge(name: string, known: { definition: SemaphoreDefinition | null; revision: number; longestMs: number }): Promise<boolean> {
    return this.edits.converge(name, known);
  }
}
