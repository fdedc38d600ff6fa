import { validateDefinition } from '../../lib/permits/definition.validator';
import type { SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { decodeEntry, encodeEntry } from '../../lib/permits/semaphore-entry.codec';

const memory = { groupPattern: 'production|staging', fromGroup: 'production', toGroup: 'dr-site', at: 1_700_000_000_000 };
const definition = { ...validateDefinition({ name: 's', duration: '1m', groupPattern: 'dr-site|staging' }), migratedFrom: memory };
const entry: SemaphoreEntry = { revision: 3, writeId: 'abc', definition, lastToken: 0, permits: [] };

describe('semaphore entry codec: the memory of a group migration', () => {
  it('round-trips it, with and without editedAt, and canonically', () => {
    expect(decodeEntry('s', encodeEntry(entry))).toEqual(entry);
    const edited = { ...entry, definition: { ...definition, migratedFrom: { ...memory, editedAt: 1_700_000_000_500 } } };
    expect(decodeEntry('s', encodeEntry(edited))).toEqual(edited);
    const shuffled = { ...entry, definition: { ...definition, migratedFrom: { at: memory.at, toGroup: 'dr-site', fromGroup: 'production', groupPattern: memory.groupPattern } } };
    expect(encodeEntry(shuffled)).toBe(encodeEntry(entry));
  });

  it('still decodes an entry written without it (the format before migrations remembered anything)', () => {
    const before = JSON.parse(encodeEntry(entry));
    delete before.definition.migratedFrom;
    const decoded = decodeEntry('s', JSON.stringify(before));
    expect(decoded.definition).toEqual(validateDefinition({ name: 's', duration: '1m', groupPattern: 'dr-site|staging' }));
    expect(decoded.definition).not.toHaveProperty('migratedFrom');
  });

  it.each([
    ['a number', 5],
    ['no previous pattern', { ...memory, groupPattern: undefined }],
    ['an empty group', { ...memory, toGroup: '' }],
    ['a time that is no whole number', { ...memory, at: 'yesterday' }],
    ['an edit time that is no whole number', { ...memory, editedAt: 1.5 }],
  ])('drops a malformed one (%s) and keeps the entry readable, as it does pausedFrom', (_, malformed) => {
    const raw = JSON.parse(encodeEntry(entry));
    raw.definition.migratedFrom = malformed;
    const decoded = decodeEntry('s', JSON.stringify(raw));
    expect(decoded.definition?.groupPattern).toBe('dr-site|staging');
    expect(decoded.definition).not.toHaveProperty('migratedFrom');
  });
});
