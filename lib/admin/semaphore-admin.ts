import { InvalidDefinitionError } from '../errors/invalid-definition.error';
import { UnknownSemaphoreError } from '../errors/unknown-semaphore.error';
import type { Clock } from '../gatekeeper/clock';
import { toDefinitionInput, validateDefinition, validateSemaphoreName } from '../gatekeeper/definition.validator';
import { fullMatch, patternError } from '../gatekeeper/pattern';
import { initialPermitState } from '../gatekeeper/permit';
import type { SemaphoreDefinition, SemaphoreDefinitionInput } from '../gatekeeper/semaphore-definition';
import { readSemaphoreStatus, type SemaphoreStatus } from '../engine/semaphore-status';
import { PermitEngine } from '../engine/permit.engine';
import type { PermitStore } from '../store/permit-store';

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

/**
 * Operator actions on definitions and permits, shared by `GatekeeperService`, the admin HTTP API and the CLI.
 * Every edit is validated before anything is written, and edits read the store itself, not a cache.
 */
export class SemaphoreAdmin {
  private readonly operator: PermitEngine;

  constructor(
    private readonly store: PermitStore,
    private readonly clock: Clock,
  ) {
    // Force-release needs no identity of its own: it names the permit by token.
    this.operator = new PermitEngine(store, { group: 'operator', acquirer: 'operator' }, clock);
  }

  /** Every definition (from the store's cache), sorted by name. */
  list(): SemaphoreDefinition[] {
    return this.store.listDefinitions();
  }

  /** The definition as stored now. Throws {@link UnknownSemaphoreError} if there is none. */
  async get(name: string): Promise<SemaphoreDefinition> {
    const definition = await this.store.readDefinition(validateSemaphoreName(name));
    if (!definition) throw new UnknownSemaphoreError(name);
    return definition;
  }

  /** Creates or replaces a definition. */
  async put(input: SemaphoreDefinitionInput): Promise<SemaphoreDefinition> {
    const definition = validateDefinition(input);
    await this.store.saveDefinition(definition);
    return definition;
  }

  /** Changes some fields of an existing definition. */
  async update(name: string, patch: SemaphoreDefinitionPatch): Promise<SemaphoreDefinition> {
    const existing = await this.get(name);
    if (patch === null || typeof patch !== 'object') {
      throw new InvalidDefinitionError(name, 'definition', 'an update must be an object of fields');
    }
    if ('name' in patch) throw new InvalidDefinitionError(name, 'name', 'cannot be changed by an update');
    const updated = validateDefinition({ ...toDefinitionInput(existing), ...patch, name });
    // A paused semaphore edited while still paused (e.g. migrated) keeps what resume should restore.
    const kept = updated.permits === 0 && existing.pausedFrom ? { ...updated, pausedFrom: existing.pausedFrom } : updated;
    await this.store.saveDefinition(kept);
    return kept;
  }

  /** Removes a definition; returns whether it existed. Its permits lapse at their holders' next refresh. */
  remove(name: string): Promise<boolean> {
    return this.store.deleteDefinition(validateSemaphoreName(name));
  }

  /** Sets permits to 0 everywhere, remembering the current count for {@link resume}. */
  async pause(name: string): Promise<SemaphoreDefinition> {
    const existing = await this.get(name);
    if (existing.permits === 0) return existing;
    const paused = { ...existing, permits: 0, pausedFrom: existing.permits };
    await this.store.saveDefinition(paused);
    return paused;
  }

  /** Restores the permits a {@link pause} took away (or `permits`, or 1 if the pause did not remember any). */
  async resume(name: string, permits?: number): Promise<SemaphoreDefinition> {
    const existing = await this.get(name);
    const restored = permits ?? existing.pausedFrom ?? (existing.permits || 1);
    return this.put({ ...toDefinitionInput(existing), permits: restored });
  }

  /**
   * The mass migration: every definition whose group pattern admits `fromGroup` gets the group pattern `toGroup`
   * (matched literally), so its job moves to that group at the holders' next refresh. With `dryRun`, only says what
   * it would change.
   */
  async migrate(fromGroup: string, toGroup: string, { dryRun = false } = {}): Promise<MigrationChange[]> {
    for (const [field, group] of [['fromGroup', fromGroup], ['toGroup', toGroup]] as const) {
      if (typeof group !== 'string' || group.trim() === '') {
        throw new InvalidDefinitionError('<migration>', field, 'must be a non-empty group name');
      }
    }
    const toPattern = escapeRegex(toGroup);
    const changes = this.store
      .listDefinitions()
      .filter((d) => !patternError(d.groupPattern) && fullMatch(d.groupPattern, fromGroup) && d.groupPattern !== toPattern)
      .map((d) => ({ name: d.name, from: d.groupPattern, to: toPattern }));
    if (!dryRun) for (const change of changes) await this.update(change.name, { groupPattern: change.to });
    return changes;
  }

  /** Every semaphore with its definition, live permits and last fencing token. */
  permits(): Promise<SemaphoreStatus[]> {
    return readSemaphoreStatus(this.store, this.clock.now());
  }

  /** Removes the live permit with `fencingToken` from `semaphore`, whoever holds it; returns whether there was one. */
  async forceRelease(semaphore: string, fencingToken: number): Promise<boolean> {
    if (!Number.isSafeInteger(fencingToken)) {
      throw new InvalidDefinitionError(semaphore, 'fencingToken', `must be a whole number, got ${String(fencingToken)}`);
    }
    return (await this.operator.forceRelease(validateSemaphoreName(semaphore), fencingToken)) === 'released';
  }

  /** Repairs an unreadable permit state by dropping every permit; fencing tokens restart from the clock, so still grow. */
  async resetPermits(semaphore: string): Promise<void> {
    // The revision jumps to the clock's milliseconds so that nodes' views (which only move to newer revisions) take it.
    await this.store.resetPermitState(validateSemaphoreName(semaphore), {
      ...initialPermitState(this.clock.now()),
      revision: this.clock.now(),
    });
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
