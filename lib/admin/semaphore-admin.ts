import { EditConflictError } from '../errors/edit-conflict.error';
import { InvalidDefinitionError } from '../errors/invalid-definition.error';
import { UnknownSemaphoreError } from '../errors/unknown-semaphore.error';
import type { Clock } from '../gatekeeper/clock';
import { toDefinitionInput, validateDefinition, validateSemaphoreName } from '../gatekeeper/definition.validator';
import { decideRevoke } from '../gatekeeper/gatekeeper.rules';
import { fullMatch, patternError } from '../gatekeeper/pattern';
import { livePermits } from '../gatekeeper/permit';
import { seedRevision, type SemaphoreEntry } from '../gatekeeper/semaphore-entry';
import type { SemaphoreDefinition, SemaphoreDefinitionInput } from '../gatekeeper/semaphore-definition';
import { compareAndSetLoop, type Attempt } from '../engine/compare-and-set.loop';
import { Deadline } from '../engine/deadline';
import type { SemaphoreStatus } from '../engine/semaphore-status';
import type { PermitStore, VersionedEntry } from '../store/permit-store';
import { decodeEntry } from '../store/semaphore-entry.codec';

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

/** Tuning of a {@link SemaphoreAdmin}. */
export interface SemaphoreAdminOptions {
  /** The clock-skew bound the nodes use, in ms (recovery waits add twice this). Default 0. */
  clockSkewMs?: number;
  /** Deadline of one edit, all attempts included. Default 10 s. */
  editTimeoutMs?: number;
  /** Compare-and-set attempts of one edit before it is rejected with {@link EditConflictError}. Default 32. */
  maxAttempts?: number;
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
    options: SemaphoreAdminOptions = {},
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

  /** Creates or replaces a definition. */
  async put(input: SemaphoreDefinitionInput): Promise<SemaphoreDefinition> {
    const definition = validateDefinition(input);
    await this.edit(definition.name, () => definition);
    return definition;
  }

  /**
   * Creates a definition unless one exists (with `overwrite`, replaces it). Returns whether it wrote. An entry
   * that may have been lost is rebuilt with a recovery wait of `graceDurationMs` (default: the definition's
   * duration) plus twice the skew bound before its first grant.
   */
  async define(definition: SemaphoreDefinition, { overwrite = false, graceDurationMs }: { overwrite?: boolean; graceDurationMs?: number } = {}): Promise<boolean> {
    return this.edit(definition.name, (current) => (current && !overwrite ? undefined : definition), graceDurationMs);
  }

  /** Changes some fields of an existing definition. */
  async update(name: string, patch: SemaphoreDefinitionPatch): Promise<SemaphoreDefinition> {
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
      // A paused semaphore edited while still paused (e.g. migrated) keeps what resume should restore.
      updated = next.permits === 0 && current.pausedFrom ? { ...next, pausedFrom: current.pausedFrom } : next;
      return updated;
    });
    return updated;
  }

  /** Removes a definition; returns whether it existed. Its holders let go at their next refresh; tokens are kept. */
  remove(name: string): Promise<boolean> {
    return this.edit(validateSemaphoreName(name), (current) => (current ? null : undefined));
  }

  /** Sets permits to 0 everywhere, remembering the current count for {@link resume}. */
  async pause(name: string): Promise<SemaphoreDefinition> {
    let paused!: SemaphoreDefinition;
    await this.edit(validateSemaphoreName(name), (current) => {
      if (!current) throw new UnknownSemaphoreError(name);
      paused = current.permits === 0 ? current : { ...current, permits: 0, pausedFrom: current.permits };
      return paused === current ? undefined : paused;
    });
    return paused;
  }

  /** Restores the permits a {@link pause} took away (or `permits`, or 1 if the pause did not remember any). */
  async resume(name: string, permits?: number): Promise<SemaphoreDefinition> {
    let resumed!: SemaphoreDefinition;
    await this.edit(validateSemaphoreName(name), (current) => {
      if (!current) throw new UnknownSemaphoreError(name);
      resumed = validateDefinition({ ...toDefinitionInput(current), permits: permits ?? current.pausedFrom ?? (current.permits || 1) });
      return resumed;
    });
    return resumed;
  }

  /**
   * The mass migration: every definition whose group pattern admits `fromGroup` gets the group pattern `toGroup`
   * (matched literally), so its job moves to that group at the holders' next refresh. With `dryRun`, only says what
   * it would change. Reads the cluster, not this node's view; each change is its own compare-and-set.
   */
  async migrate(fromGroup: string, toGroup: string, { dryRun = false } = {}): Promise<MigrationChange[]> {
    for (const [field, group] of [['fromGroup', fromGroup], ['toGroup', toGroup]] as const) {
      if (typeof group !== 'string' || group.trim() === '') {
        throw new InvalidDefinitionError('<migration>', field, 'must be a non-empty group name');
      }
    }
    const toPattern = escapeRegex(toGroup);
    const moves = (d: SemaphoreDefinition | undefined): d is SemaphoreDefinition =>
      d !== undefined && !patternError(d.groupPattern) && fullMatch(d.groupPattern, fromGroup) && d.groupPattern !== toPattern;
    const candidates = (await this.store.list({ timeoutMs: this.editTimeoutMs }))
      .map(({ entry }) => entry.definition ?? undefined)
      .filter(moves);
    if (dryRun) return candidates.map((d) => ({ name: d.name, from: d.groupPattern, to: toPattern }));
    const changes: MigrationChange[] = [];
    for (const candidate of candidates) {
      await this.edit(candidate.name, (current) => {
        if (!moves(current)) return undefined; // edited meanwhile: no longer ours to move
        changes.push({ name: current.name, from: current.groupPattern, to: toPattern });
        return { ...current, groupPattern: toPattern };
      });
    }
    return changes;
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
    if (read.lostSince === undefined) return entry;
    const waitMs = Math.max(graceDurationMs ?? 0, definition?.durationMs ?? 0, remembered?.definition?.durationMs ?? 0);
    const graceUntil = read.lostSince + waitMs + 2 * this.skewMs;
    if (graceUntil <= now) return entry;
    return { ...entry, graceUntil, rebuilt: { lostSince: read.lostSince, fromRevision: remembered?.revision ?? 0 } };
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

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
