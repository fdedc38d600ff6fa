import type { TaskRecord } from './task';
import { compareReady } from './task.rules';

/**
 * The claimable tasks one node knows of, in claim order (highest priority first, then submit order): filled by a
 * query, then kept up by the events of tasks that became pending, each carrying the task. A node claims from its
 * head without asking the store again; an entry gone stale (claimed by another node since) only fails its
 * compare-and-set. The list holds at most `capacity` tasks: beyond that it drops the last ones and says it is
 * incomplete, so the node queries again once it has run out.
 */
export class ReadyList {
  private tasks: TaskRecord[] = [];
  /** Offers since the last query began are kept by its answer: that answer may predate them. */
  private offered = new Map<string, number>();
  private queries = 0;
  private complete = false;

  constructor(private readonly capacity: number) {}

  /** How many tasks the list holds. */
  get size(): number {
    return this.tasks.length;
  }

  /** Whether the store may hold claimable work the list does not show: never queried, or tasks were dropped. */
  get incomplete(): boolean {
    return !this.complete;
  }

  /** Marks the start of a query; pass its mark to {@link replace}. */
  beginQuery(): number {
    return ++this.queries;
  }

  /**
   * The list as a query (begun at `mark`) found it, at most `limit` of them (a full answer may hide more), plus the
   * tasks offered since the query began.
   */
  replace(found: readonly TaskRecord[], limit: number, mark: number): void {
    const later = this.tasks.filter((task) => (this.offered.get(task.id) ?? 0) >= mark);
    const ids = new Set(later.map((task) => task.id));
    this.tasks = [...found.filter((task) => !ids.has(task.id)), ...later].sort(compareReady);
    for (const [id, at] of this.offered) if (at < mark) this.offered.delete(id);
    this.complete = found.length < limit;
    this.trim();
  }

  /** A task that became pending: placed in claim order, replacing what the list held under its id. */
  offer(task: TaskRecord): void {
    this.remove(task.id);
    let low = 0;
    let high = this.tasks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareReady(this.tasks[mid], task) < 0) low = mid + 1;
      else high = mid;
    }
    this.tasks.splice(low, 0, task);
    this.offered.set(task.id, this.queries);
    this.trim();
  }

  /** Forgets what was heard but could not be read: the store holds work this list does not show. */
  markIncomplete(): void {
    this.complete = false;
  }

  /**
   * Takes the next task due at `now`: of the highest priority among those due, one of the first `window` in submit
   * order, at random, so nodes that hold the same list do not all race for its head.
   */
  take(window: number, now: number): TaskRecord | undefined {
    const due: number[] = [];
    for (let i = 0; i < this.tasks.length && due.length < window; i++) {
      const task = this.tasks[i];
      if (task.state === 'pending' && task.notBefore > now) continue;
      if (due.length > 0 && task.priority !== this.tasks[due[0]].priority) break;
      due.push(i);
    }
    if (due.length === 0) return undefined;
    const [task] = this.tasks.splice(due[Math.floor(Math.random() * due.length)], 1);
    this.offered.delete(task.id);
    return task;
  }

  /** When the first task that is not due yet (a retry backing off) becomes due; `undefined` if none waits. */
  nextDueAt(now: number): number | undefined {
    let at: number | undefined;
    for (const task of this.tasks) if (task.state === 'pending' && task.notBefore > now && (at === undefined || task.notBefore < at)) at = task.notBefore;
    return at;
  }

  /** Drops a task (this node runs it, or learnt it is gone). */
  remove(id: string): void {
    const index = this.tasks.findIndex((task) => task.id === id);
    if (index >= 0) this.tasks.splice(index, 1);
    this.offered.delete(id);
  }

  private trim(): void {
    if (this.tasks.length <= this.capacity) return;
    for (const dropped of this.tasks.splice(this.capacity)) this.offered.delete(dropped.id);
    this.complete = false;
  }
}
