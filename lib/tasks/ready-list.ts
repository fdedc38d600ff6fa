import type { TaskRecord } from '../store/tasks/task';
import { compareReady } from '../store/tasks/task-store.rules';

/**
 * The claimable tasks one node knows of, in claim order (highest priority first, then submit order): filled by a
 * query, then kept up by the events of tasks that became pending, each carrying the task. A node claims from its
 * head without asking the store again; an entry gone stale (claimed by another node since) only fails its
 * compare-and-set.
 *
 * The list may not hold every claimable task: a query answers at most its limit, the list keeps at most `capacity`,
 * and an event may come without its task. It then keeps a horizon: the last task in claim order before which it
 * knows every claimable one. A task ranked after the horizon (one an event brought) is not taken, as others the list
 * does not hold may come before it; once nothing before the horizon is left, the node asks the store again.
 *
 * Pending tasks not due yet (a retry backing off) wait apart, up to `capacity` of them, and join the list when due:
 * no query returns them before then, and they never push claimable tasks out. Those beyond `capacity` are left to
 * the scan that comes round after they are due.
 *
 * A task another node claimed is dropped as soon as that is heard, so no compare-and-set is spent on it.
 */
export class ReadyList {
  private tasks: TaskRecord[] = [];
  private readonly waiting = new Map<string, TaskRecord>();
  /** Offers since the last query began are kept by its answer: that answer may predate them. */
  private readonly offered = new Map<string, number>();
  private queries = 0;
  /** See the class: `undefined` when the list knows every claimable task, `null` when it knows none for sure. */
  private horizon: TaskRecord | null | undefined = null;
  /** The query during which a task was heard of but could not be read. */
  private unreadDuring = -1;
  /** Claims heard since the last query began, by task: an answer that predates one must not bring its task back. */
  private readonly claimed = new Map<string, { readonly epoch: number; readonly during: number }>();
  /** A query is under way: only then is a claim heard kept for its answer (else nothing would ever remove it). */
  private querying = false;

  constructor(private readonly capacity: number) {}

  /** How many tasks the list holds, due or not. */
  get size(): number {
    return this.tasks.length + this.waiting.size;
  }

  /** Whether the store may hold claimable work the list does not show (never queried, dropped some, heard of unread work). */
  get incomplete(): boolean {
    return this.horizon !== undefined;
  }

  /** Marks the start of a query; pass its mark to {@link replace}. */
  beginQuery(): number {
    this.querying = true;
    return ++this.queries;
  }

  /**
   * The list as a query begun at `mark` (and evaluated at `now`) found it, in claim order, at most `limit` of them (a
   * full answer may hide more), with the tasks offered since the query began. Of two copies of a task, the one of
   * the later claim wins, else the one offered.
   */
  replace(found: readonly TaskRecord[], limit: number, mark: number, now: number): void {
    const kept = new Map(this.tasks.filter((task) => (this.offered.get(task.id) ?? -1) >= mark).map((task) => [task.id, task]));
    const merged = new Map(kept);
    for (const task of found) {
      const heard = this.claimed.get(task.id);
      if (heard && task.epoch < heard.epoch) continue; // claimed since this answer was read
      const own = kept.get(task.id);
      if (!own || task.epoch > own.epoch) merged.set(task.id, task);
      this.waiting.delete(task.id);
    }
    this.tasks = [...merged.values()].sort(compareReady);
    for (const [id, at] of this.offered) if (at < mark || !merged.has(id)) this.offered.delete(id);
    for (const [id, heard] of this.claimed) if (heard.during <= mark) this.claimed.delete(id); // the next answer is read after them
    if (mark === this.queries) this.querying = false;
    this.horizon = this.unreadDuring >= mark ? null : found.length >= limit ? found[found.length - 1] : undefined;
    this.trim();
    this.promote(now);
  }

  /** A task that became pending: placed in claim order (or set apart until due at `now`), replacing what the list held under its id. */
  offer(task: TaskRecord, now: number): void {
    this.remove(task.id);
    this.claimed.delete(task.id);
    if (task.state === 'pending' && task.notBefore > now) {
      if (this.waiting.size < this.capacity) this.waiting.set(task.id, task);
      return;
    }
    this.insert(task);
    this.offered.set(task.id, this.queries);
    this.trim();
  }

  /** Work was heard of that could not be read (or a new type is handled): nothing is taken until the next query. */
  markIncomplete(): void {
    this.horizon = null;
    this.unreadDuring = this.queries;
  }

  /** A node claimed task `id` under `epoch`: a copy of an earlier epoch is dropped, and a query's answer will not bring it back. */
  claimedElsewhere(id: string, epoch: number): void {
    // Kept for the answer of the query under way, which may have read the task before the claim. With none under way,
    // the next query reads it after the claim: a node whose slots stay full queries nothing, and keeps nothing.
    if (this.querying) this.claimed.set(id, { epoch, during: this.queries });
    const held = this.tasks.find((task) => task.id === id) ?? this.waiting.get(id);
    if (held && held.epoch < epoch) this.remove(id);
  }

  /**
   * Takes up to `count` tasks due at `now` that are not `busy` (this node still runs an earlier claim of them) and not
   * past the horizon, out of the first `window` such tasks: higher priorities first, and within a priority those
   * `mine` names first (the tasks this node's share of the window falls on: nodes that hold the same list then reach
   * for different tasks), each lot at random, so nodes that hold the same list do not all race for its head.
   */
  take(count: number, window: number, now: number, busy: (id: string) => boolean = () => false, mine?: (id: string) => boolean): TaskRecord[] {
    this.promote(now);
    if (this.horizon === null || count <= 0) return [];
    const eligible: number[] = [];
    for (let i = 0; i < this.tasks.length && eligible.length < Math.max(window, count); i++) {
      const task = this.tasks[i];
      if (this.horizon && compareReady(task, this.horizon) > 0) break;
      if (!busy(task.id)) eligible.push(i);
    }
    const chosen: number[] = [];
    for (let start = 0; start < eligible.length && chosen.length < count;) {
      let end = start;
      while (end < eligible.length && this.tasks[eligible[end]].priority === this.tasks[eligible[start]].priority) end++;
      const group = eligible.slice(start, end);
      if (mine) {
        const own = group.filter((i) => mine(this.tasks[i].id));
        const rest = group.filter((i) => !mine(this.tasks[i].id));
        while (own.length > 0 && chosen.length < count) chosen.push(own.splice(Math.floor(Math.random() * own.length), 1)[0]);
        while (rest.length > 0 && chosen.length < count) chosen.push(rest.splice(Math.floor(Math.random() * rest.length), 1)[0]);
      } else {
        while (group.length > 0 && chosen.length < count) chosen.push(group.splice(Math.floor(Math.random() * group.length), 1)[0]);
      }
      start = end;
    }
    const taken = chosen.map((i) => this.tasks[i]);
    const gone = new Set(chosen);
    this.tasks = this.tasks.filter((_, i) => !gone.has(i));
    for (const task of taken) this.offered.delete(task.id);
    return taken;
  }

  /** When the next task in claim order was submitted (epoch ms, the submitter's clock); `undefined` when none is due. */
  headSubmittedAt(): number | undefined {
    return this.tasks[0]?.submittedAt;
  }

  /** When the first task set apart (a retry backing off) becomes due; `undefined` if none waits. */
  nextDueAt(): number | undefined {
    let at: number | undefined;
    for (const task of this.waiting.values()) if (at === undefined || task.notBefore < at) at = task.notBefore;
    return at;
  }

  /** Drops a task. */
  remove(id: string): void {
    const index = this.tasks.findIndex((task) => task.id === id);
    if (index >= 0) this.tasks.splice(index, 1);
    this.waiting.delete(id);
    this.offered.delete(id);
  }

  /** Moves the tasks set apart that are due at `now` into the list. */
  private promote(now: number): void {
    for (const [id, task] of this.waiting) {
      if (task.notBefore > now) continue;
      this.waiting.delete(id);
      this.insert(task);
      this.offered.set(id, this.queries);
    }
    this.trim();
  }

  private insert(task: TaskRecord): void {
    let low = 0;
    let high = this.tasks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareReady(this.tasks[mid], task) < 0) low = mid + 1;
      else high = mid;
    }
    this.tasks.splice(low, 0, task);
  }

  private trim(): void {
    if (this.tasks.length <= this.capacity) return;
    for (const dropped of this.tasks.splice(this.capacity)) this.offered.delete(dropped.id);
    const last = this.tasks[this.tasks.length - 1];
    if (this.horizon === undefined || (this.horizon && compareReady(last, this.horizon) < 0)) this.horizon = last;
  }
}
