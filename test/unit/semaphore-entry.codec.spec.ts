import { CorruptStateError } from '../../lib/core/errors/corrupt-state.error';
import { validateDefinition } from '../../lib/permits/definition.validator';
import type { SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { randomUUID } from 'node:crypto';
import { decodeEntry, encodeEntry, writeIdOf } from '../../lib/permits/semaphore-entry.codec';
import { writtenByMark } from '../../lib/store/record-map';

const definition = validateDefinition({ name: 's', duration: '1m', groupPattern: 'prod.*' });
const entry: SemaphoreEntry = {
  revision: 3, writeId: 'abc', definition, lastToken: 3,
  permits: [{ semaphore: 's', acquirer: 'a', group: 'g', instance: 'a/1', fencingToken: 3, grantedAt: 1, refreshedAt: 2, expiresAt: 3 }],
};

describe('semaphore entry codec', () => {
  it('round-trips and encodes canonically whatever the key order of the input', () => {
    const shuffled = JSON.parse(JSON.stringify({ permits: entry.permits, lastToken: 3, definition, writeId: 'abc', revision: 3 }));
    expect(encodeEntry(shuffled)).toBe(encodeEntry(entry));
    expect(decodeEntry('s', encodeEntry(entry))).toEqual(entry);
  });

  it('round-trips a removed definition, a recovery wait, and revoked or released permits', () => {
    const other: SemaphoreEntry = {
      ...entry, definition: null, graceUntil: 99,
      permits: [{ ...entry.permits[0], revokedAt: 5 }, { ...entry.permits[0], fencingToken: 4, released: true }],
    };
    expect(decodeEntry('s', encodeEntry(other))).toEqual(other);
  });

  it('round-trips a move between stores, arriving or left, and refuses a malformed one', () => {
    for (const move of [{ state: 'arriving', from: 'postgres', at: 1_700_000_000_000 }, { state: 'left', to: 'redis', at: 1_700_000_000_001 }] as const) {
      const entry: SemaphoreEntry = { revision: 5, writeId: 'w', definition: null, lastToken: 4, permits: [], move };
      expect(decodeEntry('billing', encodeEntry(entry))).toEqual(entry);
      expect(encodeEntry(decodeEntry('billing', encodeEntry(entry)))).toBe(encodeEntry(entry));
    }
    const raw = JSON.parse(encodeEntry({ revision: 5, writeId: 'w', definition: null, lastToken: 4, permits: [] }));
    expect(() => decodeEntry('billing', JSON.stringify({ ...raw, move: { state: 'left', at: 1 } }))).toThrow(/billing.*move is malformed/);
  });

  it('round-trips when a removal was remembered (vacatedAt), still as format 2', () => {
    const vacated: SemaphoreEntry = { ...entry, vacatedAt: 1_700_000_000_123 };
    const raw = encodeEntry(vacated);
    expect(decodeEntry('s', raw)).toEqual(vacated);
    expect(JSON.parse(raw)).toMatchObject({ v: 2, vacatedAt: 1_700_000_000_123 });
    expect(encodeEntry(decodeEntry('s', raw))).toBe(raw);
  });

  it('reads an entry written before vacatedAt existed (a rolling upgrade) and writes it back byte for byte', () => {
    // Exactly what the version before vacatedAt wrote for `entry`.
    const old =
      '{"v":2,"revision":3,"writeId":"abc","definition":{"name":"s","permits":1,"durationMs":60000,"groupPattern":"prod.*","acquirerPattern":".*"},' +
      '"lastToken":3,"permits":[{"semaphore":"s","acquirer":"a","group":"g","instance":"a/1","fencingToken":3,"grantedAt":1,"refreshedAt":2,"expiresAt":3}]}';
    const decoded = decodeEntry('s', old);
    expect(decoded).toEqual(entry);
    expect(decoded).not.toHaveProperty('vacatedAt');
    expect(encodeEntry(decoded)).toBe(old);
  });

  it.each([
    ['a vacatedAt that is not a whole number', JSON.stringify({ ...JSON.parse(encodeEntry(entry)), vacatedAt: 'yesterday' })],
    ['not JSON', '{oops'],
    ['not an object', '[1,2]'],
    ['a foreign format version', JSON.stringify({ ...JSON.parse(encodeEntry(entry)), v: 1 })],
    ['a missing field', JSON.stringify({ v: 2, revision: 1, writeId: 'x', permits: [], definition: null })],
    ['a permit without its instance', encodeEntry(entry).replace('"instance":"a/1",', '')],
    ['a definition stored under another name', encodeEntry(entry).replace('"name":"s"', '"name":"t"')],
    ['a definition failing validation', encodeEntry(entry).replace('"permits":1', '"permits":-2')],
    ['a number instead of a string', 42],
  ])('rejects %s, naming the key', (_, raw) => {
    expect(() => decodeEntry('s', raw)).toThrow(CorruptStateError);
    expect(() => decodeEntry('s', raw)).toThrow(/"s"/);
  });

  it("carries a writer's mark only in its writeId field: the text a watch leaves out is in the writer's entries alone", () => {
    const writer = randomUUID();
    const own = writtenByMark(writer);
    const withResources: SemaphoreEntry = { ...entry, annex: { a: 1 }, permits: [{ ...entry.permits[0], resources: { r: 1 } }] };
    const mine = [0, 35, 1e9].flatMap((n) => [entry, withResources, { ...entry, revision: 12_345_678 }].map((e) => encodeEntry({ ...e, writeId: writeIdOf(writer, n) })));
    expect(mine.map((raw) => JSON.parse(raw).v)).toContain(3);
    expect(mine.filter((raw) => !raw.includes(own))).toEqual([]);
    const others = [randomUUID(), writeIdOf(randomUUID(), 0), writer, `${writer}x`, '', `x${writeIdOf(writer, 0)}`].map((writeId) => encodeEntry({ ...entry, writeId }));
    expect(others.filter((raw) => raw.includes(own))).toEqual([]);
    // A definition or permit that happens to contain the writeId does not make the entry the writer's.
    expect(encodeEntry({ ...entry, permits: [{ ...entry.permits[0], acquirer: `"writeId":"${writeIdOf(writer, 0)}` }] }).includes(own)).toBe(false);
  });
});
