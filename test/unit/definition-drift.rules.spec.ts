import { definitionDrift } from '../../lib/permits/definition-drift.rules';
import type { SemaphoreDefinition } from '../../lib/permits/semaphore-definition';

const billing: SemaphoreDefinition = { name: 'billing', permits: 1, durationMs: 60_000, groupPattern: '.*', acquirerPattern: '.*' };

describe('definitionDrift: where the module\'s definition and the stored one differ', () => {
  it('finds nothing when they agree', () => {
    expect(definitionDrift(billing, { ...billing })).toEqual([]);
  });

  it('names each setting that differs, with both values (the duration in ms)', () => {
    expect(definitionDrift({ ...billing, permits: 2, durationMs: 300_000, groupPattern: 'eu-.*' }, billing)).toEqual([
      { field: 'permits', code: 2, stored: 1 },
      { field: 'duration', code: 300_000, stored: 60_000 },
      { field: 'groupPattern', code: 'eu-.*', stored: '.*' },
    ]);
    expect(definitionDrift({ ...billing, acquirerPattern: 'node-a' }, billing)).toEqual([{ field: 'acquirerPattern', code: 'node-a', stored: '.*' }]);
  });

  it('takes a pause for an operator\'s, not a difference: a paused semaphore\'s permits are what its resume restores', () => {
    expect(definitionDrift(billing, { ...billing, permits: 0, pausedFrom: 1 })).toEqual([]);
    expect(definitionDrift({ ...billing, permits: 3 }, { ...billing, permits: 0, pausedFrom: 1 })).toEqual([{ field: 'permits', code: 3, stored: 1 }]);
  });
});
