import { movedAwayReason } from '../store/store-moves';
import { SemaphoreMoveRefusedError } from './errors/semaphore-move.error';
import { Deadline } from '../core/deadline';
import { EditConflictError } from '../core/errors/edit-conflict.error';
import type { Clock } from '../core/clock';
import { compareAndSetLoop, type Attempt } from './compare-and-set.loop';
import { carryMigrationMemory } from './group-migration.rules';
import { decideRevoke } from './permit.rules';
import type { PermitStore, VersionedEntry } from './permit-store';
import type { SemaphoreDefinition } from './semaphore-definition';
import { seedRevision, type SemaphoreEntry } from './semaphore-entry';

/** What an edit does to the definition it read: the new definition, or `undefined` to leave the entry alone. */
export type DefinitionChange = (current: SemaphoreDefinition | undefined) => SemaphoreDefinition | null | undefined;

/** The bounds every operator edit runs within. */
export interface EditBounds {
  /** The clock-skew bound the nodes use, in ms (recovery waits add twice this). */
  readonly skewMs: number;
  /** Deadline of one edit, all attempts included. */
  readonly editTimeoutMs: number;
  /** Compare-and-set attempts of one edit before it is rejected with {@link EditConflictError}. */
  readonly maxAttempts: number;
}

/**
 * The write path of every operator action on a semaphore's entry: a compare-and-set, re-read and re-decided on
 * conflict, within a deadline and a number of attempts; concurrent edits are all applied, or rejected with
 * {@link EditConflictError}, never lost. Also what creating an entry must do (seed its revision above anything
 * seen, and wait out a lost one's permits) and the revocations and recovery merges that are edits too.
 */
export class SemaphoreEdits {
  constructor(
    private readonly store: PermitStore,
    private readonly clock: Clock,
    private readonly bounds: EditBounds,
  ) {}

  /**
   * Applies `change` to the definition by compare-and-set, re-reading and re-applying it on conflict. Creating an
   * entry (none, or one that may have been lost) seeds its revision above anything seen and, where its partition
   * lost data recently, sets the recovery wait. With `rebuild` (a node putting back what it expects to exist, not an
   * operator's edit), an entry a restore of the store dropped comes back with the definition it had, when this node
   * remembers none: an operator's pause or edit before the backup is not undone by a node's options. An operator's
   * edit (not `byNode`) of a semaphore that moved to another store is refused ({@link SemaphoreMoveRefusedError}).
   * Returns whether anything was written.
   */
  edit(name: string, change: DefinitionChange, graceDurationMs?: number, { rebuild = false, byNode = false }: { rebuild?: boolean; byNode?: boolean } = {}): Promise<boolean> {
    return this.loop(name, (read) => {
      const current = read.entry?.definition ?? undefined;
      const next = change(current);
      if (next === undefined || (next === null && !read.entry)) return { result: false };
      // An operator's edit of a semaphore that moved to another store would change what no node reads any more.
      const move = read.entry?.move;
      if (move?.state === 'left' && !byNode) {
        throw new SemaphoreMoveRefusedError(`Semaphore "${name}": ${movedAwayReason('permits', move.to, move.at)}`);
      }
      if (read.entry) return { result: true, write: { ...read.entry, revision: read.entry.revision + 1, definition: next } };
      const dropped = rebuild && next !== null && this.store.remembered(name) === undefined ? read.restored?.definition : undefined;
      return { result: true, write: this.created(name, dropped ?? next, read, graceDurationMs) };
    });
  }

  /** The definition stored under `name` now (`undefined`: none), read within an edit's deadline. */
  async current(name: string): Promise<SemaphoreDefinition | undefined> {
    return (await this.store.read(name, { timeoutMs: this.bounds.editTimeoutMs })).entry?.definition ?? undefined;
  }

  /**
   * Creates a definition unless one exists (with `overwrite`, replaces it, keeping what a migration remembers).
   * Returns whether it wrote. An entry that may have been lost is rebuilt with a recovery wait of `graceDurationMs`
   * (default: the definition's duration) plus twice the skew bound before its first grant. Without `overwrite`, an
   * entry a restore of the store dropped is rebuilt with the definition it had (paused, edited), unless this node
   * remembers one.
   */
  define(definition: SemaphoreDefinition, { overwrite = false, graceDurationMs }: { overwrite?: boolean; graceDurationMs?: number } = {}): Promise<boolean> {
    const change: DefinitionChange = (current) => {
      if (!current) return definition;
      return overwrite ? carryMigrationMemory(current, definition, this.clock.now()) : undefined;
    };
    return this.edit(definition.name, change, graceDurationMs, { rebuild: !overwrite, byNode: true });
  }

  /** Revokes the live permit with fencing token `token` (or every one); returns whether one was revoked. */
  async revoke(name: string, token: number | 'all'): Promise<boolean> {
    const outcome = await this.loop(name, (read) => {
      const decision = decideRevoke(read.entry, token, this.clock.now(), this.bounds.skewMs);
      const write = decision.next && read.entry ? { ...read.entry, revision: read.entry.revision + 1, ...decision.next } : undefined;
      return { result: decision.outcome, write };
    });
    return outcome === 'revoked';
  }

  /**
   * While a rebuilt entry waits out the lost one's permits, brings in what this node knows better than its
   * rebuilder did: a longer duration extends the wait, a newer definition (by the revision it was seen at)
   * replaces the one put back. Returns whether it wrote.
   */
  converge(name: string, known: { definition: SemaphoreDefinition | null; revision: number; longestMs: number }): Promise<boolean> {
    const skewMs = this.bounds.skewMs;
    return this.loop(name, (read) => {
      const entry = read.entry;
      const now = this.clock.now();
      if (!entry?.rebuilt || entry.graceUntil === undefined || entry.graceUntil <= now) return { result: false };
      const graceUntil = Math.max(entry.graceUntil, entry.rebuilt.lostSince + known.longestMs + 2 * skewMs);
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

  private created(name: string, definition: SemaphoreDefinition | null, read: VersionedEntry, graceDurationMs?: number): Omit<SemaphoreEntry, 'writeId'> {
    const now = this.clock.now();
    const skewMs = this.bounds.skewMs;
    // What this node saw last, else what a restore of the store dropped (a fresh node after a restore saw nothing).
    const remembered = this.store.remembered(name) ?? read.restored;
    const revision = seedRevision(now, remembered?.revision, skewMs);
    const entry = { revision, definition, lastToken: 0, permits: [] };
    // Nothing removes an entry, so one this node remembers and cannot find was lost, whatever its partition's
    // canary says: a canary marked fresh after the loss (a restarted cluster declared new before this node came
    // back) must not cut the wait of a permit this node saw. Counted from now: the loss was no later.
    const lostSince = read.lostSince ?? (remembered ? now : undefined);
    if (lostSince === undefined) return entry;
    const waitMs = Math.max(graceDurationMs ?? 0, definition?.durationMs ?? 0, remembered?.definition?.durationMs ?? 0);
    const graceUntil = lostSince + waitMs + 2 * skewMs;
    if (graceUntil <= now) return entry;
    return { ...entry, graceUntil, rebuilt: { lostSince, fromRevision: remembered?.revision ?? 0 } };
  }

  private async loop<R>(name: string, decide: (read: VersionedEntry) => Attempt<R>): Promise<R> {
    const { editTimeoutMs, maxAttempts } = this.bounds;
    const deadline = new Deadline(editTimeoutMs, `Semaphore "${name}": edit`);
    const result = await compareAndSetLoop(this.store, name, (read) => {
      const attempt = decide(read);
      return { ...attempt, result: { value: attempt.result } };
    }, { maxAttempts, deadline });
    if (!result) throw new EditConflictError('semaphore', name, maxAttempts);
    return result.value;
  }
}
