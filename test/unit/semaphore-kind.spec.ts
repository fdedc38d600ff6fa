import { validateMigrationRequest, validateUndoRequest } from '../../lib/permits/group-migration.rules';
import { decodeEntry, encodeEntry } from '../../lib/permits/semaphore-entry.codec';
import { checkKindEdit, semaphoreKind } from '../../lib/permits/semaphore-kind';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';

/** What `fn` threw (it must throw). */
function thrown(fn: () => unknown): InvalidInputError {
  try {
    fn();
  } catch (error) {
    return error as InvalidInputError;
  }
  throw new Error('expected a throw');
}

describe('semaphore kinds', () => {
  it.each([
    ['billing', 'job'],
    ['election:leader', 'election'],
    ['allocation:queues', 'allocation'],
    ['elections', 'job'],
    ['my-allocation:x', 'job'],
  ])('reads %p as a %s semaphore', (name, kind) => {
    expect(semaphoreKind(name)).toBe(kind);
  });

  it('reads the kind of an entry exactly as the previous version stored it: the format has no kind field, nothing to migrate', () => {
    // Bytes as the version before kinds wrote them (an allocation's entry with its annex, format 3).
    const raw = '{"v":3,"revision":1700000000000001,"writeId":"w1","definition":{"name":"allocation:queues","permits":1000,"durationMs":10000,'
      + '"groupPattern":".*","acquirerPattern":".*"},"lastToken":0,"permits":[],"annex":{"requests":0}}';
    const entry = decodeEntry('allocation:queues', raw);
    expect(entry.definition).toMatchObject({ name: 'allocation:queues', permits: 1000 });
    expect(semaphoreKind(entry.definition!.name)).toBe('allocation');
    // Written back byte for byte: compare-and-set against entries of older nodes keeps working, and they still read it.
    expect(encodeEntry(entry)).toBe(raw);
  });

  describe('edits of permits', () => {
    it('lets every edit of a job through', () => {
      expect(() => checkKindEdit('billing', 'pause', 3, 0)).not.toThrow();
      expect(() => checkKindEdit('billing', 'permits', undefined, 1)).not.toThrow();
    });

    it.each([
      ['pause', 'election:leader', 1, 0, /leader election "leader", not a job: .*pausing it makes the leader step down/],
      ['resume', 'election:leader', 0, 1, /leader election "leader", not a job: .*resuming it lets a leader be elected again/],
      ['pause', 'allocation:queues', 1000, 0, /allocation "queues", not a job: its permits are how many nodes may take part, and pausing it/],
      ['permits', 'allocation:queues', 1000, 2, /allocation "queues", not a job: .*fewer turn the other nodes into standbys/],
    ] as const)('refuses a %s of %s unless forced, naming the semaphore and the field permits', (edit, name, current, next, reason) => {
      const error = thrown(() => checkKindEdit(name, edit, current, next));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect([error.id, error.field]).toEqual([name, 'permits']);
      expect(error.message).toMatch(reason);
      expect(error.message).toContain('force it (CLI --force, admin API ?force=true, service { force: true })');
      expect(() => checkKindEdit(name, edit, current, next, { force: true })).not.toThrow();
    });

    it('lets an edit through that leaves the permits as they are (a group pattern, a lease, a resume of a running one)', () => {
      expect(() => checkKindEdit('allocation:queues', 'permits', 1000, 1000)).not.toThrow();
      expect(() => checkKindEdit('election:leader', 'resume', 1, 1)).not.toThrow();
    });

    it('refuses creating one by hand unless forced, naming the field name', () => {
      const error = thrown(() => checkKindEdit('election:nightly', 'permits', undefined, 1));
      expect([error.id, error.field]).toEqual(['election:nightly', 'name']);
      expect(error.message).toContain('it is defined when a node stands in the election (module option elections)');
      expect(() => checkKindEdit('election:nightly', 'permits', undefined, 1, { force: true })).not.toThrow();
    });
  });

  describe('group migrations', () => {
    it.each([
      ['a migration', () => validateMigrationRequest({ fromGroup: 'production', toGroup: 'dr-site', names: ['billing', 'election:leader'] })],
      ['an undo', () => validateUndoRequest({ names: ['election:leader'] })],
    ])('refuse %s that names an election, naming it, the field names, and how to move it', (_, request) => {
      const error = thrown(request);
      expect([error.id, error.field]).toEqual(['election:leader', 'names']);
      expect(error.message).toContain('group migrations move jobs only; to move it, edit its group pattern (nestjs-gatekeeper set election:leader --group-pattern');
    });
  });
});
