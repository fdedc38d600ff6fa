import { validateDefinition } from '../../lib/permits/definition.validator';
import { parseDuration } from '../../lib/core/duration';
import type { SemaphoreDefinitionInput } from '../../lib/permits/semaphore-definition';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';

describe('parseDuration', () => {
  it.each([
    [1500, 1500],
    ['1500', 1500],
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1.5h', 5_400_000],
    [' 2 minutes ', 120_000],
    [0.2, 1],
  ])('parses %p as %p ms', (input, expected) => {
    expect(parseDuration(input, 'job', 'duration')).toBe(expected);
  });

  it.each(['soon', '', '5 parsecs', -1, 0, '-5s', Number.NaN, Number.POSITIVE_INFINITY, null, undefined, {}])(
    'rejects %p naming the owner and field',
    (input) => {
      const call = () => parseDuration(input as never, 'billing', 'duration');
      expect(call).toThrow(InvalidInputError);
      expect(call).toThrow(/^Semaphore "billing": invalid duration: /);
    },
  );

  it('accepts zero only when asked to', () => {
    expect(parseDuration(0, 'job', 'lockAtLeastFor', { allowZero: true })).toBe(0);
  });
});

describe('validateDefinition', () => {
  it('fills defaults: 1 permit, any group, any acquirer', () => {
    expect(validateDefinition({ name: 'billing', duration: '1m' })).toEqual({
      name: 'billing', permits: 1, durationMs: 60_000, groupPattern: '.*', acquirerPattern: '.*',
    });
  });

  it('keeps permits: 0 (paused)', () => {
    expect(validateDefinition({ name: 'p', duration: 1000, permits: 0 }).permits).toBe(0);
  });

  const cases: Array<[string, unknown, string, RegExp]> = [
    ['empty name', { name: '', duration: '1m' }, 'name', /non-empty/],
    ['blank name', { name: '   ', duration: '1m' }, 'name', /non-empty/],
    ['over-long name', { name: 'x'.repeat(201), duration: '1m' }, 'name', /at most 200/],
    ['negative permits', { name: 'b', duration: '1m', permits: -1 }, 'permits', /whole number/],
    ['fractional permits', { name: 'b', duration: '1m', permits: 1.5 }, 'permits', /whole number/],
    ['string permits', { name: 'b', duration: '1m', permits: '2' }, 'permits', /whole number/],
    ['unparsable duration', { name: 'b', duration: 'soon' }, 'duration', /cannot parse 'soon'/],
    ['zero duration', { name: 'b', duration: 0 }, 'duration', /more than zero/],
    ['missing duration', { name: 'b' }, 'duration', /expected milliseconds/],
    ['invalid group regex', { name: 'b', duration: '1m', groupPattern: 'prod(' }, 'groupPattern', /not a valid regex/],
    ['invalid acquirer regex', { name: 'b', duration: '1m', acquirerPattern: '[a-' }, 'acquirerPattern', /not a valid regex/],
    ['empty pattern', { name: 'b', duration: '1m', groupPattern: '' }, 'groupPattern', /non-empty regex/],
    ['unknown field', { name: 'b', duration: '1m', permit: 2 }, 'permit', /not a definition field/],
    ['list for a definition', Object.assign([], { name: 'b', duration: '1m' }), 'definition', /must be an object, got an array/],
  ];
  it.each(cases)('rejects %s with an error naming the semaphore and %s', (_, input, field, reason) => {
    let error: unknown;
    try {
      validateDefinition(input as SemaphoreDefinitionInput);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    const e = error as InvalidInputError;
    expect(e.field).toBe(field);
    expect(e.message).toMatch(reason);
    const name = (input as { name: string }).name;
    if (field !== 'name' && field !== 'definition') expect([e.kind, e.id]).toEqual(['semaphore', name]);
    expect(e.message).toContain(`invalid ${field}`);
  });
});
