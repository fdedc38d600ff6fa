import { CorruptStateError } from '../../lib/core/errors/corrupt-state.error';
import { EditConflictError } from '../../lib/core/errors/edit-conflict.error';
import type { ScheduleDefinitionInput } from '../../lib/schedules/schedule-definition';
import { validateScheduleDefinition } from '../../lib/schedules/schedule-definition.validator';
import type { ScheduleRecord } from '../../lib/schedules/schedule-record';
import { decodeScheduleRecord, encodeScheduleRecord } from '../../lib/schedules/schedule-record.codec';
import { decidePaused, decideRemove, decideUpsert, type ScheduleDecision, type ScheduleWriteContext } from '../../lib/schedules/schedule.rules';
import { NotFoundError } from '../../lib/core/errors/not-found.error';

const T0 = 1_700_000_000_000;
const ctx = (over: Partial<ScheduleWriteContext> = {}): ScheduleWriteContext => ({ now: T0, by: 'node-a', writeId: 'w1', ...over });
const def = (over: Partial<ScheduleDefinitionInput> = {}) => validateScheduleDefinition({ id: 'r', cron: '0 * * * *', handler: 'h', duration: '1m', ...over });
const written = (d: ScheduleDecision): ScheduleRecord => {
  if (!d.write) throw new Error(`expected a write, got ${d.outcome}`);
  return d.write;
};

describe('schedule rules', () => {
  it('creates a new id at the clock in microseconds (plus the skew bound), recording who and when', () => {
    const d = decideUpsert(undefined, def(), ctx({ skewMs: 5 }));
    expect(d.outcome).toBe('created');
    expect(d.revision).toBe((T0 + 5) * 1000);
    expect(d.write).toEqual({ id: 'r', revision: (T0 + 5) * 1000, updatedAt: T0, updatedBy: 'node-a', writeId: 'w1', definition: def() });
  });

  it('writes nothing for an equal definition, even with its data keys in another order, so replicas deploying at once never bump it', () => {
    const stored = written(decideUpsert(undefined, def({ data: { a: 1, b: [2] } }), ctx()));
    const again = decideUpsert(stored, def({ data: { b: [2], a: 1 } }), ctx({ by: 'node-b', writeId: 'w2', now: T0 + 9 }));
    expect(again).toEqual({ outcome: 'unchanged', revision: stored.revision });
  });

  it('updates by one revision on any different field', () => {
    const stored = written(decideUpsert(undefined, def(), ctx()));
    for (const change of [{ cron: '5 * * * *' }, { data: 1 }, { timeZone: 'Europe/Berlin' }, { overlap: 'replace' as const }, { permits: 2 }]) {
      const d = decideUpsert(stored, def(change), ctx({ writeId: 'w2', now: T0 + 1 }));
      expect(d).toMatchObject({ outcome: 'updated', revision: stored.revision + 1, write: { revision: stored.revision + 1, updatedAt: T0 + 1, writeId: 'w2' } });
    }
  });

  it('pauses and resumes by one revision each; pausing a paused schedule writes nothing', () => {
    const stored = written(decideUpsert(undefined, def(), ctx()));
    const paused = written(decidePaused(stored, 'r', true, ctx()));
    expect(paused).toMatchObject({ revision: stored.revision + 1, definition: { ...def(), paused: true } });
    expect(decidePaused(paused, 'r', true, ctx())).toEqual({ outcome: 'unchanged', revision: paused.revision });
    expect(written(decidePaused(paused, 'r', false, ctx())).definition).toEqual(def());
  });

  it('removes by a tombstone; a re-create continues its revision, and removing again writes nothing', () => {
    const stored = written(decideUpsert(undefined, def(), ctx()));
    const removal = decideRemove(stored, 'r', ctx());
    expect(removal).toMatchObject({ outcome: 'removed', revision: stored.revision + 1, write: { definition: null } });
    const tombstone = written(removal);
    expect(decideRemove(tombstone, 'r', ctx())).toEqual({ outcome: 'unchanged', revision: tombstone.revision });
    expect(decideRemove(undefined, 'never', ctx())).toEqual({ outcome: 'unchanged', revision: 0 });
    // Long after, with a clock far ahead: still one above the tombstone, never back to a clock-seeded start.
    const again = decideUpsert(tombstone, def(), ctx({ now: T0 + 86_400_000 }));
    expect(again).toMatchObject({ outcome: 'created', revision: tombstone.revision + 1 });
  });

  it('refuses to pause or resume what is not there (absent or removed)', () => {
    const tombstone = written(decideRemove(written(decideUpsert(undefined, def(), ctx())), 'r', ctx()));
    expect(() => decidePaused(undefined, 'r', true, ctx())).toThrow(NotFoundError);
    expect(() => decidePaused(tombstone, 'r', false, ctx())).toThrow('No schedule "r" (never defined, or removed)');
  });

  it('applies an operator edit only at the revision it expects (0: none live), else a clear EditConflictError', () => {
    const stored = written(decideUpsert(undefined, def(), ctx()));
    expect(decideUpsert(stored, def({ data: 2 }), ctx({ expectedRevision: stored.revision })).outcome).toBe('updated');
    expect(decideUpsert(undefined, def(), ctx({ expectedRevision: 0 })).outcome).toBe('created');
    const stale = () => decideUpsert(stored, def({ data: 2 }), ctx({ expectedRevision: stored.revision - 1 }));
    expect(stale).toThrow(EditConflictError);
    expect(stale).toThrow(`Schedule "r": edit not applied, it expected revision ${stored.revision - 1} but the schedule is at revision ${stored.revision}; nothing was changed`);
    expect(() => decideUpsert(stored, def(), ctx({ expectedRevision: 0 }))).toThrow(/expected revision 0 but the schedule is at revision/);
    expect(() => decideRemove(undefined, 'r', ctx({ expectedRevision: 4 }))).toThrow(/expected revision 4 but the schedule is at none \(no live schedule\)/);
    expect(() => decidePaused(stored, 'r', true, ctx({ expectedRevision: 1 }))).toThrow(EditConflictError);
  });
});

describe('schedule record codec', () => {
  const record = (over: Partial<ScheduleRecord> = {}): ScheduleRecord => ({ id: 'r', revision: 7, updatedAt: T0, updatedBy: 'n', writeId: 'w', definition: def({ data: { b: 1, a: 2 } }), ...over });

  it('writes keys in one fixed order, so equal records are equal bytes, and reads back what it wrote', () => {
    const raw = encodeScheduleRecord(record());
    expect(raw.startsWith('{"v":1,"id":"r","revision":7,"updatedAt":1700000000000,"updatedBy":"n","writeId":"w","definition":{"id":"r","cron":"0 * * * *","timeZone":"UTC","handler":"h","data":{"a":2,"b":1},')).toBe(true);
    expect(decodeScheduleRecord('r', raw)).toEqual(record());
    expect(encodeScheduleRecord(decodeScheduleRecord('r', raw))).toBe(raw);
    const tombstone = encodeScheduleRecord(record({ definition: null }));
    expect(decodeScheduleRecord('r', tombstone).definition).toBeNull();
  });

  it('carries a schedule\'s health through the bytes, and leaves a record without it as it was', () => {
    const withHealth = record({ definition: validateScheduleDefinition({ id: 'r', cron: '0 * * * *', handler: 'h', duration: '1m', health: { grace: '30s', failureThreshold: 2 } }) });
    const raw = encodeScheduleRecord(withHealth);
    expect(raw).toContain('"health":{"graceMs":30000,"failureThreshold":2,"recoveryThreshold":1}');
    expect(decodeScheduleRecord('r', raw)).toEqual(withHealth);
    expect(encodeScheduleRecord(record())).not.toContain('health');
  });

  it.each([
    ['not JSON', '{', /not JSON/],
    ['another format', JSON.stringify({ v: 9 }), /unknown schedule format version 9/],
    ['another id', encodeScheduleRecord(record({ id: 'x' })), /holds the schedule "x"/],
    ['no revision', encodeScheduleRecord(record()).replace('"revision":7', '"revision":"7"'), /revision/],
    ['a bad definition', encodeScheduleRecord(record()).replace('"permits":1', '"permits":0'), /invalid permits/],
  ])('refuses %s with CorruptStateError naming the key', (_, raw, reason) => {
    expect(() => decodeScheduleRecord('r', raw)).toThrow(CorruptStateError);
    expect(() => decodeScheduleRecord('r', raw)).toThrow(reason);
  });
});
