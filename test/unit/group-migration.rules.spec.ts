import {
  carryMigrationMemory, escapeGroup, literalGroups, planMove, planUndo, selects, validateMigrationRequest, validateUndoRequest,
} from '../../lib/permits/group-migration.rules';
import { fullMatch } from '../../lib/core/pattern';
import { validateDefinition } from '../../lib/permits/definition.validator';
import type { SemaphoreDefinition } from '../../lib/permits/semaphore-definition';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';

const def = (groupPattern: string, extra: Partial<SemaphoreDefinition> = {}): SemaphoreDefinition => ({
  ...validateDefinition({ name: 'job', duration: '1m', groupPattern }),
  ...extra,
});

describe('group migration rules', () => {
  it.each([
    ['production', ['production']],
    ['production|staging', ['production', 'staging']],
    ['eu\\.prod|dr-site', ['eu.prod', 'dr-site']],
    ['a/b', ['a/b']],
    ['.*', undefined],
    ['prod.*', undefined],
    ['prod\\d', undefined],
    ['(production)', undefined],
    ['[p]roduction', undefined],
    ['production|', undefined],
    ['|production', undefined],
    ['prod+', undefined],
    ['^production$', undefined],
  ])('reads %p as the literal groups %p', (pattern, groups) => {
    expect(literalGroups(pattern)).toEqual(groups);
  });

  it('escapes a group so that it admits exactly that group', () => {
    for (const group of ['dr-site', 'eu.prod', 'a|b', 'x*(y)', 'back\\slash', '[z]{1}^$?+/']) {
      const pattern = escapeGroup(group);
      expect(literalGroups(pattern)).toEqual([group]);
      expect(fullMatch(pattern, group)).toBe(true);
      expect(fullMatch(pattern, `${group}x`)).toBe(false);
    }
  });

  it.each([
    ['production', 'dr-site'],
    ['production|staging', 'dr-site|staging'],
    ['staging|production', 'staging|dr-site'],
    ['production|dr-site', 'dr-site'],
    ['dr-site|production', 'dr-site'],
  ])('moves the literal list %p to %p', (pattern, to) => {
    expect(planMove(def(pattern), 'production', 'dr-site')).toEqual({ kind: 'move', to });
  });

  it('escapes the target group it writes', () => {
    expect(planMove(def('production'), 'production', 'eu.dr')).toEqual({ kind: 'move', to: 'eu\\.dr' });
  });

  it('skips a regex that admits the source group unless wildcards are included', () => {
    for (const pattern of ['.*', 'prod.*', 'production|staging.*']) {
      expect(planMove(def(pattern), 'production', 'dr-site')).toMatchObject({ kind: 'skip', code: 'WILDCARD' });
      expect(planMove(def(pattern), 'production', 'dr-site', { includeWildcards: true })).toEqual({ kind: 'move', to: 'dr-site' });
    }
  });

  it('leaves alone a pattern that does not admit the source group, reporting it only when named', () => {
    for (const pattern of ['staging', 'dr-site', 'stag.*']) {
      expect(planMove(def(pattern), 'production', 'dr-site', { includeWildcards: true })).toEqual({ kind: 'none' });
      expect(planMove(def(pattern), 'production', 'dr-site', { named: true })).toMatchObject({ kind: 'skip', code: 'NOT_ADMITTED' });
    }
  });

  it('undoes only a remembered migration whose pattern was not edited since, and only between the groups asked for', () => {
    const memory = { groupPattern: 'production|staging', fromGroup: 'production', toGroup: 'dr-site', at: 1 };
    const moved = def('dr-site|staging', { migratedFrom: memory });
    expect(planUndo(moved)).toEqual({ kind: 'move', to: 'production|staging' });
    expect(planUndo(moved, { fromGroup: 'production', toGroup: 'dr-site' })).toEqual({ kind: 'move', to: 'production|staging' });
    expect(planUndo(moved, { toGroup: 'other' })).toMatchObject({ kind: 'skip', code: 'OTHER_MIGRATION' });
    expect(planUndo(def('dr-site'))).toMatchObject({ kind: 'skip', code: 'NOT_MIGRATED' });
    expect(planUndo(def('x', { migratedFrom: { ...memory, editedAt: 2 } }))).toMatchObject({ kind: 'skip', code: 'EDITED_SINCE' });
  });

  it('keeps the memory through edits of other fields, and marks it edited once the group pattern changes', () => {
    const memory = { groupPattern: 'production', fromGroup: 'production', toGroup: 'dr-site', at: 1 };
    const moved = def('dr-site', { migratedFrom: memory });
    expect(carryMigrationMemory(moved, def('dr-site', { permits: 3 }), 5).migratedFrom).toEqual(memory);
    const edited = carryMigrationMemory(moved, def('staging'), 5);
    expect(edited.migratedFrom).toEqual({ ...memory, editedAt: 5 });
    // Edited back to what the migration wrote: still edited, so undo never resurrects the old pattern.
    expect(carryMigrationMemory(edited, def('dr-site'), 9).migratedFrom).toEqual({ ...memory, editedAt: 5 });
    expect(carryMigrationMemory(def('x'), def('y'), 5).migratedFrom).toBeUndefined();
  });

  it('selects by name and/or name pattern (whole match), all when neither', () => {
    expect(selects({ names: [] }, 'a')).toEqual({ selected: true, named: false });
    expect(selects({ names: ['a'] }, 'b')).toEqual({ selected: false, named: false });
    expect(selects({ names: ['a'], namePattern: 'b.*' }, 'bill')).toEqual({ selected: true, named: false });
    expect(selects({ names: ['a'], namePattern: 'b.*' }, 'a')).toEqual({ selected: true, named: true });
    expect(selects({ names: [], namePattern: 'bill' }, 'billing')).toEqual({ selected: false, named: false });
  });

  it.each([
    ['an empty source group', { fromGroup: '', toGroup: 'b' }, 'fromGroup'],
    ['a missing target group', { fromGroup: 'a' }, 'toGroup'],
    ['a space-padded group', { fromGroup: 'a ', toGroup: 'b' }, 'fromGroup'],
    ['the same group twice', { fromGroup: 'a', toGroup: 'a' }, 'toGroup'],
    ['an invalid name pattern', { fromGroup: 'a', toGroup: 'b', namePattern: '(' }, 'namePattern'],
    ['an empty name', { fromGroup: 'a', toGroup: 'b', names: [''] }, 'names'],
    ['names that are no list', { fromGroup: 'a', toGroup: 'b', names: 'billing' }, 'names'],
    ['a flag that is no boolean', { fromGroup: 'a', toGroup: 'b', dryRun: 'yes' }, 'dryRun'],
  ])('rejects %s naming the field', (_, request, field) => {
    const call = () => validateMigrationRequest(request as never);
    expect(call).toThrow(InvalidInputError);
    // The request field, under the request's name: no made-up semaphore.
    expect(call).toThrow(new RegExp(`^Invalid migration\\.${field}:`));
    expect(() => call()).toThrow(expect.objectContaining({ field, kind: undefined }));
  });

  it('fills in the defaults of a request and of an undo', () => {
    expect(validateMigrationRequest({ fromGroup: 'a', toGroup: 'b', names: ['x', 'x'] })).toEqual({
      fromGroup: 'a', toGroup: 'b', names: ['x'], includeWildcards: false, force: false, dryRun: false,
    });
    expect(validateUndoRequest()).toEqual({ names: [], dryRun: false });
    expect(() => validateUndoRequest({ toGroup: '' })).toThrow(/^Invalid migration\.toGroup: must be a non-empty group name/);
  });
});
