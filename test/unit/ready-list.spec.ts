import { ReadyList } from '../../lib/tasks/ready-list';
import type { TaskRecord } from '../../lib/tasks/task';

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
  for (let next = list.take(1, now); next; next = list.take(1, now)) names.push(next.name!);
  return names;
}

describe('ReadyList: the claimable tasks a node holds, from queries and events', () => {
  it('keeps claim order: higher priority first, then submit order, whatever order tasks arrive in', () => {
    const list = known(10);
    list.offer(task('late', 3));
    list.offer(task('urgent', 9, { priority: 5 }));
    list.offer(task('early', 1));
    list.offer(task('middle', 2));
    expect(drain(list)).toEqual(['urgent', 'early', 'middle', 'late']);
  });

  it('an offer replaces what the list held under the same id (a task handed back, retried)', () => {
    const list = known(10);
    list.offer(task('a', 1));
    list.offer(task('b', 2));
    list.offer(task('a', 3, { epoch: 7 }));
    expect(list.size).toBe(2);
    expect(list.take(1, NOW)).toMatchObject({ name: 'b' });
    expect(list.take(1, NOW)).toMatchObject({ name: 'a', epoch: 7 });
  });

  it('a query’s answer replaces the list but keeps what events told after the query began', () => {
    const list = new ReadyList(10);
    list.offer(task('stale', 1)); // heard before the query: the answer knows better
    const mark = list.beginQuery();
    list.offer(task('new', 5)); // heard while the query ran: its answer may predate it
    list.replace([task('found', 2)], 256, mark, NOW);
    expect(drain(list)).toEqual(['found', 'new']);
  });

  it('is complete after an answer below the query’s limit; after a full one, takes nothing ranked past its last task', () => {
    const list = new ReadyList(10);
    expect(list.incomplete).toBe(true); // never queried
    expect(list.take(4, NOW)).toBeUndefined();
    list.replace([task('a', 1)], 2, list.beginQuery(), NOW);
    expect(list.incomplete).toBe(false);
    list.replace([task('a', 1), task('b', 2)], 2, list.beginQuery(), NOW);
    expect(list.incomplete).toBe(true); // a full answer may hide more
    list.offer(task('told', 9)); // ranked after the answer's last: older tasks the list does not hold come first
    list.offer(task('urgent', 10, { priority: 5 })); // ranked before it: safe
    expect(drain(list)).toEqual(['urgent', 'a', 'b']);
    expect(list.size).toBe(1); // 'told' waits for the next query
  });

  it('once it dropped tasks (capacity) or heard of one it could not read, takes only what it can vouch for', () => {
    const list = new ReadyList(3);
    list.replace([], 2, list.beginQuery(), NOW);
    for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) list.offer(task(name, 4 - i));
    expect(list.size).toBe(3);
    expect(list.incomplete).toBe(true);
    list.offer(task('e', 9)); // after the last it kept: not taken, nor kept
    expect(drain(list)).toEqual(['d', 'c', 'b']);
    list.replace([task('x', 1)], 2, list.beginQuery(), NOW);
    list.markIncomplete(); // an event it could not read
    expect(list.take(4, NOW)).toBeUndefined();
    const mark = list.beginQuery();
    list.markIncomplete(); // during the query: its answer cannot vouch for it either
    list.replace([task('x', 1)], 2, mark, NOW);
    expect(list.take(4, NOW)).toBeUndefined();
    list.replace([task('x', 1)], 2, list.beginQuery(), NOW);
    expect(drain(list)).toEqual(['x']);
  });

  it('keeps a task this node still runs (a retry told before the run ended) for later, instead of dropping it', () => {
    const list = new ReadyList(10);
    list.replace([], 256, list.beginQuery(), NOW);
    list.offer(task('again', 1));
    expect(list.take(4, NOW, (id) => id === 't:again')).toBeUndefined();
    expect(list.take(4, NOW)).toMatchObject({ name: 'again' });
  });

  it('a query’s answer keeps the retries backing off it could not return, and the later claim of a task wins', () => {
    const list = new ReadyList(10);
    list.replace([], 256, list.beginQuery(), NOW);
    list.offer(task('backing-off', 1, { notBefore: NOW + 1_000 }));
    list.offer(task('handed-back', 2, { epoch: 3 }));
    const mark = list.beginQuery();
    list.offer(task('lapsed', 3, { epoch: 1 }));
    list.replace([task('handed-back', 2, { epoch: 3 }), task('lapsed', 3, { state: 'running', epoch: 2 })], 256, mark, NOW);
    expect(list.take(1, NOW)).toMatchObject({ name: 'handed-back' });
    expect(list.take(1, NOW)).toMatchObject({ name: 'lapsed', state: 'running', epoch: 2 });
    expect(list.take(1, NOW + 1_000)).toMatchObject({ name: 'backing-off' });
  });

  it('takes only due tasks (a retry backing off waits), and says when the first of those falls due', () => {
    const list = known(10);
    list.offer(task('backing-off', 1, { priority: 9, notBefore: NOW + 500 }));
    list.offer(task('ready', 2));
    list.offer(task('later', 3, { notBefore: NOW + 200 }));
    expect(drain(list)).toEqual(['ready']);
    expect(list.nextDueAt(NOW)).toBe(NOW + 200);
    expect(drain(list, NOW + 500)).toEqual(['backing-off', 'later']);
    expect(list.nextDueAt(NOW)).toBeUndefined();
  });

  it('picks at random within the window, only among the head priority', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const list = known(10);
      for (const [n, name] of ['a', 'b', 'c', 'd'].entries()) list.offer(task(name, n));
      list.offer(task('low', 0, { priority: -1 }));
      seen.add(list.take(3, NOW)!.name!);
    }
    expect([...seen].sort()).toEqual(['a', 'b', 'c']);
    const mixed = known(10);
    mixed.offer(task('high', 5, { priority: 1 }));
    mixed.offer(task('low', 0));
    expect(mixed.take(4, NOW)!.name).toBe('high');
  });

  it('forgets a task removed, and a lapsed running task is due at once', () => {
    const list = new ReadyList(10);
    list.offer(task('gone', 1));
    list.replace([task('lapsed', 2, { state: 'running', notBefore: NOW + 10_000 })], 256, list.beginQuery(), NOW);
    list.remove('t:lapsed');
    expect(list.size).toBe(0);
    list.replace([task('lapsed', 2, { state: 'running', notBefore: NOW + 10_000 })], 256, list.beginQuery(), NOW);
    expect(drain(list)).toEqual(['lapsed']);
  });
});
