import type { TaskClaim, TaskRecord } from './task';
import type { ClaimWatch, TaskWatcher } from './task-store';

/** One watch: its listener, the types it wants (`undefined`: every type), and what it hears of claims. */
interface Watch {
  readonly listener: TaskWatcher;
  readonly types: ReadonlySet<string> | undefined;
  readonly claims: ClaimWatch | undefined;
}

/**
 * The watches a task store was asked for (`TaskStore.watch`), and how a change it heard is told to them: the one home
 * of that rule for every task store, whatever feeds it (the default store's change feed, Hazelcast's member-side
 * listener). A listener's failure is its own: the others are still told.
 */
export class TaskWatches {
  private readonly watches = new Set<Watch>();

  /** @param changed Called whenever the watches change, so the store brings its feed in line with them. */
  constructor(private readonly changed: () => void) {}

  /** Adds a watch; returns what removes it. */
  add(listener: TaskWatcher, types?: readonly string[], claims?: ClaimWatch): () => void {
    const watch: Watch = { listener, types: types && new Set(types), claims };
    this.watches.add(watch);
    this.changed();
    return () => {
      if (this.watches.delete(watch)) this.changed();
    };
  }

  /** Removes every watch (the store closes). */
  clear(): void {
    this.watches.clear();
    this.changed();
  }

  get size(): number {
    return this.watches.size;
  }

  /** Whether some watch wants tasks of `type`. */
  wants(type: string): boolean {
    for (const watch of this.watches) if (!watch.types || watch.types.has(type)) return true;
    return false;
  }

  /** The types some watch wants, or `undefined` when one wants every type. */
  types(): Set<string> | undefined {
    const all = new Set<string>();
    for (const watch of this.watches) {
      if (!watch.types) return undefined;
      for (const type of watch.types) all.add(type);
    }
    return all;
  }

  /**
   * Whether any watch wants claims: `false` if none does; else the instance whose claims none of them needs (all
   * name the same one), or `undefined` when they need every claim.
   */
  claimsWanted(): false | string | undefined {
    const excepts = new Set<string | undefined>();
    for (const watch of this.watches) if (watch.claims) excepts.add(watch.claims.except);
    if (excepts.size === 0) return false;
    return excepts.size === 1 ? [...excepts][0] : undefined;
  }

  /**
   * A task of `type` became pending or was claimed: told to the watches that want it. A running task is a claim, told
   * to the watches that hear claims (not to the instance that made it); any other (or `undefined`, a task that could
   * not be read) is pending work.
   */
  tell(type: string, id: string, task: TaskRecord | undefined): void {
    if (task?.state === 'running') {
      if (task.claim) this.tellClaim(type, id, task.claim);
      return;
    }
    for (const watch of [...this.watches]) {
      if (watch.types && !watch.types.has(type)) continue;
      try {
        watch.listener(type, id, task);
      } catch {
        // The watcher's own business.
      }
    }
  }

  /** A task of `type` was claimed (`claim`): told to the watches that hear claims, not to the instance that made it. */
  tellClaim(type: string, id: string, claim: TaskClaim): void {
    for (const watch of [...this.watches]) {
      if (watch.types && !watch.types.has(type)) continue;
      try {
        if (watch.claims && claim.instance !== watch.claims.except) watch.claims.listener(type, id, claim);
      } catch {
        // The watcher's own business.
      }
    }
  }

  /**
   * The feed may have lost changes: every watch is told of work it could not read (no task), which makes a worker
   * read its candidates again at its next claim instead of waiting for its scan, as every view re-reads when changes
   * may have been missed.
   */
  missed(): void {
    for (const { listener } of [...this.watches]) {
      try {
        listener('', '', undefined);
      } catch {
        // The watcher's own business.
      }
    }
  }
}
