import type { Clock } from '../core/clock';
import { Deadline } from '../core/deadline';
import { EditConflictError } from '../core/errors/edit-conflict.error';
import { compareAndSetLoop, type Attempt } from './compare-and-set.loop';
import { SemaphoreMoveRefusedError } from './errors/semaphore-move.error';
import type { PermitStore } from './permit-store';
import { livePermits } from './permit.rules';
import { seedRevision, type SemaphoreEntry } from './semaphore-entry';

/** One end of a move: a permit store, the clock its permits are timed by, and what the store is (`postgres`, `redis`). */
export interface PermitMoveSide {
  readonly store: PermitStore;
  readonly clock: Clock;
  readonly kind: string;
}

/** The bounds a move works within. */
export interface PermitMoveBounds {
  /** The bound on clock disagreement the nodes run with (the module's `maxClockSkew`), in ms. */
  readonly skewMs: number;
  /** Deadline of each entry's compare-and-set, in ms. */
  readonly editTimeoutMs: number;
}

/** What one step of a move did. */
export interface PermitMoveReport {
  /** The semaphores written on the store moved to (held there until the move finishes). */
  readonly copied: readonly string[];
  /** The semaphores now granted on the store moved to (`finish` only). */
  readonly released: readonly string[];
  /** How long `finish` waited for the last permit on the store moved from to lapse, in ms. */
  readonly waitedMs: number;
}

const ATTEMPTS = 20;

/**
 * Moving permits from one store to another under running nodes, with never two holders (see `nestjs-gatekeeper store
 * move`). `prepare` copies every semaphore onto the store moved to, held (`SemaphoreEntry.move`, state `arriving`):
 * nodes started there define nothing over it and are granted nothing, while the nodes on the store moved from keep
 * running. `finish` marks every entry there as left (nothing is granted or refreshed on it any more), waits until
 * every permit it still lists lapsed by that store's clock plus the skew bound, copies the definitions again (edits
 * made since `prepare` included), with revisions above every token the old store gave, and lifts the holds.
 */
export class PermitMove {
  constructor(
    private readonly from: PermitMoveSide,
    private readonly to: PermitMoveSide,
    private readonly bounds: PermitMoveBounds,
    /** Told as `finish` starts to wait: until when (the old store's clock) and which semaphores still had a permit. */
    private readonly onWait: (until: number, holders: readonly string[]) => void = () => undefined,
  ) {}

  /** Copies every semaphore onto the store moved to, held there; refused for one the nodes there hold already. */
  async prepare(): Promise<PermitMoveReport> {
    const entries = await this.sourceEntries();
    for (const { name, entry } of entries) this.checkNotLeft(name, entry);
    const copied: string[] = [];
    for (const { name, entry } of entries) {
      await this.copy(name, entry, true);
      copied.push(name);
    }
    return { copied, released: [], waitedMs: 0 };
  }

  /** Marks the store moved from as left, waits out its permits, copies again and lifts the holds. */
  async finish(): Promise<PermitMoveReport> {
    const leftAt = this.from.clock.now();
    const marked = new Map<string, SemaphoreEntry>();
    // Listed again until a listing finds nothing unmarked: an old node may define a semaphore while the first ones are marked.
    for (let round = 0; round < 5; round++) {
      const unmarked = (await this.sourceEntries()).filter(({ name }) => !marked.has(name));
      if (unmarked.length === 0) break;
      for (const { name } of unmarked) {
        const entry = await this.edit(this.from.store, name, (current) => {
          if (!current || current.move?.state === 'left') return { result: current };
          const write = { ...current, revision: current.revision + 1, move: { state: 'left' as const, to: this.to.kind, at: leftAt } };
          return { result: { ...write, writeId: '' }, write };
        });
        if (entry) marked.set(name, entry);
      }
    }
    // Nothing is granted or refreshed on a left entry: the permits it lists now are the last, and lapse by their expiry.
    const started = performance.now();
    const lastExpiry = Math.max(0, ...[...marked.values()].flatMap((entry) => entry.permits.map((p) => p.expiresAt)));
    const holders = [...marked].filter(([, entry]) => livePermits(entry.permits, this.from.clock.now() - this.bounds.skewMs).length > 0).map(([name]) => name);
    if (holders.length > 0) this.onWait(lastExpiry + this.bounds.skewMs, holders);
    await this.waitUntilLapsed(lastExpiry);
    for (const name of marked.keys()) {
      const { entry } = await this.from.store.read(name, { timeoutMs: this.bounds.editTimeoutMs });
      const live = entry ? livePermits(entry.permits, this.from.clock.now() - this.bounds.skewMs) : [];
      if (live.length > 0) throw new SemaphoreMoveRefusedError(`permits: "${name}" still has a live permit on the ${this.from.kind} store (token ${live[0].fencingToken}) after the wait: run finish again`);
    }
    const released: string[] = [];
    for (const name of marked.keys()) {
      // The entry as it is now: a definition an old node or an operator changed since prepare comes along.
      const { entry } = await this.from.store.read(name, { timeoutMs: this.bounds.editTimeoutMs });
      if (!entry) continue;
      await this.copy(name, entry, false);
      released.push(name);
    }
    return { copied: released, released, waitedMs: Math.round(performance.now() - started) };
  }

  /** Every entry of the store moved from (definitions removed included: their tokens must not go back either). */
  private async sourceEntries(): Promise<Array<{ name: string; entry: SemaphoreEntry }>> {
    return this.from.store.list({ timeoutMs: this.bounds.editTimeoutMs });
  }

  private checkNotLeft(name: string, entry: SemaphoreEntry): void {
    if (entry.move?.state === 'left') {
      throw new SemaphoreMoveRefusedError(`permits: "${name}" on the ${this.from.kind} store moved to the ${entry.move.to} store on ${new Date(entry.move.at).toISOString()} already: nothing to prepare from here`);
    }
  }

  /**
   * Writes `source`'s definition (and what a capability keeps with it) onto the store moved to, with a revision above
   * both stores' and no permit; `held`: marked as arriving, else as granted there from now on.
   */
  private async copy(name: string, source: SemaphoreEntry, held: boolean): Promise<void> {
    await this.edit(this.to.store, name, (current) => {
      const now = this.to.clock.now();
      const live = current ? livePermits(current.permits, now - this.bounds.skewMs) : [];
      if (live.length > 0 && current?.move?.state !== 'arriving') {
        throw new SemaphoreMoveRefusedError(
          `permits: "${name}" is held on the ${this.to.kind} store already (by ${live.map((p) => `${p.acquirer}, token ${p.fencingToken}`).join('; ')}): `
            + `nodes run on it before the move was prepared, so two could hold it; stop them, let the permit lapse, and prepare again`,
        );
      }
      const revision = Math.max(seedRevision(now, Math.max(source.revision, current?.revision ?? 0), this.bounds.skewMs), (current?.revision ?? 0) + 1);
      const { move: _move, graceUntil: _grace, rebuilt: _rebuilt, vacatedAt: _vacated, ...kept } = source;
      const write: Omit<SemaphoreEntry, 'writeId'> = {
        ...kept,
        revision,
        lastToken: Math.max(source.lastToken, current?.lastToken ?? 0),
        permits: [],
        ...(held && source.definition && { move: { state: 'arriving' as const, from: this.from.kind, at: now } }),
      };
      return { result: undefined, write };
    });
  }

  /** Waits until `expiresAt` plus the skew bound has passed on the old store's clock. */
  private async waitUntilLapsed(expiresAt: number): Promise<void> {
    for (;;) {
      const left = expiresAt + this.bounds.skewMs - this.from.clock.now();
      if (left < 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(left + 1, 1_000)));
    }
  }

  /** One entry's compare-and-set, re-read and re-decided on conflict. */
  private async edit<R>(store: PermitStore, name: string, decide: (current: SemaphoreEntry | undefined) => Attempt<R>): Promise<R> {
    const deadline = new Deadline(this.bounds.editTimeoutMs, `Semaphore "${name}": move`);
    const result = await compareAndSetLoop(store, name, (read) => {
      const attempt = decide(read.entry);
      return { ...attempt, result: { value: attempt.result } };
    }, { maxAttempts: ATTEMPTS, deadline });
    if (!result) throw new EditConflictError('semaphore', name, ATTEMPTS);
    return result.value;
  }
}
