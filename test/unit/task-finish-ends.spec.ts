import type { TaskRecord } from '../../lib/store/tasks/task';
import { decideClaim, type TaskActor } from '../../lib/tasks/task-claim.rules';
import { decideFinish } from '../../lib/tasks/task-outcome.rules';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';
import { decodeTask, encodeTask, finishEnds } from '../../lib/store/tasks/task.codec';

const T0 = 1_700_000_000_000;
const BACKOFF = { baseMs: 1_000, factor: 2, maxMs: 30_000 };
const actor: TaskActor = { instance: 'a/1', acquirer: 'a' };

/** A task submitted with `input`, claimed by `actor`, as stored (its text) and decoded from it. */
function running(input: Partial<Parameters<typeof decideSubmit>[1]> = {}): { task: TaskRecord; raw: string } {
  const submitted = decideSubmit(undefined, { type: 'mail', name: 'n1', data: { to: 'x "y"\n' }, ...input }, T0, 60_000);
  if (submitted.outcome !== 'created') throw new Error('expected a new task');
  const claim = decideClaim(decodeTask(submitted.task.id, encodeTask(submitted.task)), actor, T0 + 1, 5_000);
  if (claim.outcome !== 'claimed') throw new Error('expected a claim');
  const raw = encodeTask(claim.task);
  return { task: decodeTask(claim.task.id, raw), raw };
}

function finished(read: { task: TaskRecord }, outcome: Parameters<typeof decideFinish>[3], epoch = read.task.epoch): TaskRecord {
  const d = decideFinish(read.task, actor, epoch, outcome, T0 + 10, BACKOFF);
  if (d.outcome !== 'ok') throw new Error(d.message);
  return d.task;
}

/** The text a store writes for `ends` over `raw`: the new head, what lay between, the new tail. */
function spliced(raw: string, ends: NonNullable<ReturnType<typeof finishEnds>>): string {
  return ends.next.head + raw.slice(ends.expected.head.length, raw.length - ends.expected.tail.length) + ends.next.tail;
}

describe('finishEnds: a finish written by the ends of its text', () => {
  it('gives the ends of a plain finish; what a store splices decodes to the finish and is its encoding', () => {
    const read = running();
    const next = finished(read, { kind: 'done', result: { sent: 'ok\n', n: 1795833299544123.5 } });
    const ends = finishEnds(read, next)!;
    expect(ends).toBeDefined();
    expect(read.raw.startsWith(ends.expected.head) && read.raw.endsWith(ends.expected.tail)).toBe(true);
    // The ends are JSON text, so never hold a raw newline (a store joins head and tail with one).
    for (const end of [ends.expected.head, ends.expected.tail, ends.next.head, ends.next.tail]) expect(end).not.toContain('\n');
    const text = spliced(read.raw, ends);
    expect(decodeTask(next.id, text)).toEqual(next);
    expect(encodeTask(next)).toBe(text);
  });

  it('gives none for a finish that is not plain: failed, retried, in a group, with sub-groups, or a record changed otherwise', () => {
    const read = running();
    expect(finishEnds(read, finished(read, { kind: 'failed', error: 'boom' }))).toBeUndefined();
    expect(finishEnds(read, finished(read, { kind: 'retry', error: 'later' }))).toBeUndefined();
    expect(finishEnds(read, finished(read, { outcome: { kind: 'done' }, subgroups: ['mail:g'] }))).toBeUndefined();
    const grouped = running({ name: undefined, group: { name: 'g', number: 1 } });
    expect(finishEnds(grouped, finished(grouped, { kind: 'done' }))).toBeUndefined();
    const next = finished(read, { kind: 'done' });
    expect(finishEnds(read, { ...next, priority: 9 })).toBeUndefined();
    const { data: _data, ...dropped } = next;
    expect(finishEnds(read, dropped as TaskRecord)).toBeUndefined();
    expect(finishEnds({ task: read.task, raw: null }, next)).toBeUndefined();
    expect(finishEnds(read, null)).toBeUndefined();
  });

  it('gives none when the stored text is not in the order it splices: the claim not last, or other attempts than read', () => {
    const read = running();
    const next = finished(read, { kind: 'done' });
    const { state, epoch, attempts, claim, ...rest } = read.task;
    const reordered = JSON.stringify({ v: 1, state, epoch, attempts, claim, ...rest });
    expect(finishEnds({ task: read.task, raw: reordered }, next)).toBeUndefined();
    expect(finishEnds({ task: read.task, raw: read.raw.replace('"attempt":1', '"attempt":2') }, next)).toBeUndefined();
  });
});
