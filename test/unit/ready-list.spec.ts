import { ReadyList } from '../../lib/tasks/ready-list';
import { rendezvous } from '../../lib/tasks/claim-turns';
import type { TaskRecord } from '../../lib/store/tasks/task';

const NOW = 1_000_000;

function task(name: string, seq: number, extra: Partial<TaskRecord> = {}): TaskRecord {
  return { id: `t:${name}`, type: 't', name, priority: 0, data: null, state: 'pending', seq, submittedAt: NOW, notBefore: NOW, epoch: 0, attempts: [], ...extra };
}

/** A list that queried once and found nothing: it vouches for what events bring. */
function known(capacity: number): ReadyList {
  const list = new ReadyList(capacity);
  list.replace([], 256, list.beginQuery(), NOW);
  return list;
}

/** Takes every task due at `now`, one at a time from the head (window 1: no randomness). */
function drain(list: ReadyList, now = NOW): string[] {
  const names: string[] = [];
  for (let next = list.take(1, 1, now); next.length > 0; next = list.take(1, 1, now)) names.push(next[0].name!);
  return names;
}

describe('ReadyList: the claimable tasks a node holds, from queries and events', () => {
  it('keeps claim order: higher priority first, then submit order, whatever order tasks arrive in', () => {
    const list = known(10);
    list.offer(task('late', 3), NOW);
    list.offer(task('urgent', 9, { priority: 5 }), NOW);
    list.offer(task('early', 1), NOW);
    list.offer(task('middle', 2), NOW);
    expect(drain(list)).toEqual(['urgent', 'early', 'middle', 'late']);
  });

  it('an offer replaces what the list held under the same id (a task handed back, retried)', () => {
    const list = known(10);
    list.offer(task('a', 1), NOW);
    list.offer(task('b', 2), NOW);
    list.offer(task('a', 3, { epoch: 7 }), NOW);
    expect(list.size).toBe(2);
    expect(list.take(2, 2, NOW).map((t) => [t.name, t.epoch]).sort()).toEqual([['a', 7], ['b', 0]]);
  });

  it('a query’s answer replaces the list but keeps what events told after the query began', () => {
    const list = known(10);
    list.offer(task('stale', 1), NOW); // heard before the query: the answer knows better
    const mark = list.beginQuery();
    list.offer(task('new', 5), NOW); // heard while the query ran: its answer may predate it
    list.replace([task('found', 2)], 256, mark, NOW);
    expect(drain(list)).toEqual(['found', 'new']);
  });

  it('is complete after an answer below the query’s limit; after a full one, takes nothing ranked past its last task', () => {
    const list = new ReadyList(10);
    expect(list.incomplete).toBe(true); // never queried
    expect(list.take(4, 4, NOW)).toEqual([]);
    list.replace([task('a', 1)], 2, list.beginQuery(), NOW);
    expect(list.incomplete).toBe(false);
    list.replace([task('a', 1), task('b', 2)], 2, list.beginQuery(), NOW);
    expect(list.incomplete).toBe(true); // a full answer may hide more
    list.offer(task('told', 9), NOW); // ranked after the answer's last: older tasks the list does not hold come first
    list.offer(task('urgent', 10, { priority: 5 }), NOW); // ranked before it: safe
    expect(drain(list)).toEqual(['urgent', 'a', 'b']);
    expect(list.size).toBe(1); // 'told' waits for the next query
  });

  it('once it dropped tasks (capacity) or heard of one it could not read, takes only what it can vouch for', () => {
    const list = known(3);
    for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) list.offer(task(name, 4 - i), NOW);
    expect(list.size).toBe(3);
    expect(list.incomplete).toBe(true);
    list.offer(task('e', 9), NOW); // after the last it kept: not taken, nor kept
    expect(drain(list)).toEqual(['d', 'c', 'b']);
    list.replace([task('x', 1)], 2, list.beginQuery(), NOW);
    list.markIncomplete(); // an event it could not read
    expect(list.take(4, 4, NOW)).toEqual([]);
    const mark = list.beginQuery();
    list.markIncomplete(); // during the query: its answer cannot vouch for it either
    list.replace([task('x', 1)], 2, mark, NOW);
    expect(list.take(4, 4, NOW)).toEqual([]);
    list.replace([task('x', 1)], 2, list.beginQuery(), NOW);
    expect(drain(list)).toEqual(['x']);
  });

  it('keeps a task this node still runs (a retry told before the run ended) for later, instead of dropping it', () => {
    const list = known(10);
    list.offer(task('again', 1), NOW);
    expect(list.take(4, 4, NOW, (id) => id === 't:again')).toEqual([]);
    expect(list.take(4, 4, NOW).map((t) => t.name)).toEqual(['again']);
  });

  it('sets retries backing off apart: they survive queries, never push claimable tasks out, and join when due', () => {
    const list = known(2);
    list.offer(task('backing-off', 1, { priority: 9, notBefore: NOW + 500 }), NOW);
    list.offer(task('later', 3, { notBefore: NOW + 200 }), NOW);
    list.replace([task('ready', 2), task('also', 4)], 256, list.beginQuery(), NOW);
    expect(list.incomplete).toBe(false); // two claimable ones fit: the waiting ones take no room
    expect(list.nextDueAt()).toBe(NOW + 200);
    expect(drain(list)).toEqual(['ready', 'also']);
    expect(drain(list, NOW + 500)).toEqual(['backing-off', 'later']);
    expect(list.nextDueAt()).toBeUndefined();
  });

  it('of two copies of a task, keeps the one of the later claim (a lapsed claim the query found over an older event)', () => {
    const list = known(10);
    const mark = list.beginQuery();
    list.offer(task('lapsed', 3, { epoch: 1 }), NOW);
    list.offer(task('handed-back', 2, { epoch: 3 }), NOW);
    list.replace([task('handed-back', 2, { state: 'running', epoch: 3 }), task('lapsed', 3, { state: 'running', epoch: 2 })], 256, mark, NOW);
    expect(list.take(2, 2, NOW).map((t) => [t.name, t.state]).sort()).toEqual([['handed-back', 'pending'], ['lapsed', 'running']]);
  });

  it('a batch comes from the first `window` tasks of the list, higher priorities first, at random within a priority', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const list = known(20);
      for (let n = 0; n < 10; n++) list.offer(task(`n${n}`, n), NOW);
      list.offer(task('low', 0, { priority: -1 }), NOW);
      for (const t of list.take(3, 4, NOW)) seen.add(t.name!);
    }
    expect([...seen].sort()).toEqual(['n0', 'n1', 'n2', 'n3']);
    const mixed = known(10);
    mixed.offer(task('high', 5, { priority: 1 }), NOW);
    for (let n = 0; n < 4; n++) mixed.offer(task(`n${n}`, n), NOW);
    const batch = mixed.take(2, 4, NOW).map((t) => t.name);
    expect(batch[0]).toBe('high');
    expect(['n0', 'n1', 'n2']).toContain(batch[1]);
  });

  it('forgets a task removed, and a lapsed running task is due at once', () => {
    const list = known(10);
    list.offer(task('gone', 1), NOW);
    list.replace([task('lapsed', 2, { state: 'running', notBefore: NOW + 10_000 })], 256, list.beginQuery(), NOW);
    list.remove('t:lapsed');
    expect(list.size).toBe(0);
    list.replace([task('lapsed', 2, { state: 'running', notBefore: NOW + 10_000 })], 256, list.beginQuery(), NOW);
    expect(drain(list)).toEqual(['lapsed']);
  });
});

describe('ReadyList: claims heard', () => {
  it('a claim heard drops the task at once, with no query, so no compare-and-set is spent on it', () => {
    const list = known(10);
    list.offer(task('taken', 1, { epoch: 2 }), NOW);
    list.offer(task('free', 2), NOW);
    list.offer(task('backing-off', 3, { notBefore: NOW + 1_000 }), NOW);
    list.claimedElsewhere('t:taken', 3);
    list.claimedElsewhere('t:backing-off', 1); // claimed once its backoff ended, as another node saw it
    expect(list.size).toBe(1);
    expect(drain(list, NOW + 2_000)).toEqual(['free']);
  });

  it('drops a task another node claimed (an earlier epoch only), and an answer read before the claim does not bring it back', () => {
    const list = known(10);
    list.offer(task('claimed', 1, { epoch: 4 }), NOW);
    list.offer(task('newer', 2, { epoch: 9 }), NOW);
    const mark = list.beginQuery();
    list.claimedElsewhere('t:claimed', 5);
    list.claimedElsewhere('t:newer', 9); // the copy held is of that claim or later (a lapsed claim found): kept
    list.claimedElsewhere('t:unheld', 3);
    list.replace([task('claimed', 1, { epoch: 4 }), task('newer', 2, { epoch: 9 }), task('unheld', 3, { epoch: 2 }), task('other', 4)], 256, mark, NOW);
    expect(drain(list)).toEqual(['newer', 'other']);
    // The claim lapsed: a query after that finds the task at the claim's epoch, claimable again.
    list.replace([task('claimed', 1, { state: 'running', epoch: 5 })], 256, list.beginQuery(), NOW);
    expect(drain(list)).toEqual(['claimed']);
  });

  it('keeps claims heard only for the answer of a query under way: a node whose slots stay full, querying nothing, keeps none', () => {
    const list = known(10);
    const claimedSoFar = () => (list as unknown as { claimed: Map<string, unknown> }).claimed.size;
    for (let i = 0; i < 1_000; i++) list.claimedElsewhere(`t:elsewhere-${i}`, 1);
    expect(claimedSoFar()).toBe(0);
    // A query under way may have read a task before its claim: that claim is kept until the answer, then let go.
    const mark = list.beginQuery();
    list.claimedElsewhere('t:raced', 2);
    list.replace([task('raced', 1, { epoch: 1 }), task('free', 2)], 256, mark, NOW);
    expect(drain(list)).toEqual(['free']);
    expect(claimedSoFar()).toBe(0);
  });
});

describe('ReadyList.take with a node\'s own share: nodes that hold the same list reach for different tasks', () => {
  const NODES = ['node-a/1', 'node-b/2', 'node-c/3'];
  /** Whether `self` scores highest for `id` among NODES (the rule ClaimTurns.owner applies). */
  const mineOf = (self: string) => (id: string) => NODES.every((other) => other === self || rendezvous(other, id) < rendezvous(self, id));

  it('splits a burst\'s tasks about evenly among the nodes, each task to exactly one', () => {
    const ids = Array.from({ length: 3000 }, (_, i) => `t:${i}`);
    const owners = ids.map((id) => NODES.filter((n) => mineOf(n)(id)));
    expect(owners.every((o) => o.length === 1)).toBe(true);
    const shares = NODES.map((n) => owners.filter((o) => o[0] === n).length);
    for (const share of shares) expect(share).toBeGreaterThan(3000 / NODES.length * 0.85);
  });

  it('takes its own tasks of a priority first, then the others, never a lower priority before a higher one', () => {
    const list = known(100);
    for (let i = 0; i < 12; i++) list.offer(task(`n${i}`, i), NOW);
    list.offer(task('urgent', 99, { priority: 5 }), NOW);
    const mine = mineOf(NODES[0]);
    const own = Array.from({ length: 12 }, (_, i) => `t:n${i}`).filter(mine);
    const taken = list.take(1 + own.length, 13, NOW, undefined, mine).map((t) => t.id);
    expect(taken[0]).toBe('t:urgent');
    expect(taken.slice(1).sort()).toEqual(own.sort());
  });
});
