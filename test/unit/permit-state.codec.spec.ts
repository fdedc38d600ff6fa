import { CorruptStateError } from '../../lib/errors/corrupt-state.error';
import { validateDefinition } from '../../lib/gatekeeper/definition.validator';
import {
  decodeDefinition, decodePermitState, encodeDefinition, encodePermitState,
} from '../../lib/store/permit-state.codec';
import type { PermitState } from '../../lib/gatekeeper/permit';

const state: PermitState = {
  revision: 3, lastToken: 17, writeId: 'abc',
  permits: [{ semaphore: 's', acquirer: 'a', group: 'g', fencingToken: 17, grantedAt: 1, refreshedAt: 2, expiresAt: 3 }],
};

describe('permit state codec', () => {
  it('round-trips and encodes canonically whatever the key order of the input', () => {
    const shuffled = JSON.parse(JSON.stringify({ permits: state.permits, writeId: 'abc', lastToken: 17, revision: 3 }));
    expect(encodePermitState(shuffled)).toBe(encodePermitState(state));
    expect(decodePermitState('s', encodePermitState(state))).toEqual(state);
  });

  it.each([
    ['not JSON', '{oops'],
    ['not an object', '[1,2]'],
    ['a foreign format version', JSON.stringify({ ...state, v: 99 })],
    ['a missing field', JSON.stringify({ v: 1, revision: 1, writeId: 'x', permits: [] })],
    ['a malformed permit', JSON.stringify({ v: 1, revision: 1, lastToken: 1, writeId: 'x', permits: [{ acquirer: 'a' }] })],
    ['a number instead of a string', 42],
  ])('rejects %s, naming the key', (_, raw) => {
    expect(() => decodePermitState('billing', raw)).toThrow(CorruptStateError);
    expect(() => decodePermitState('billing', raw)).toThrow(/"billing"/);
  });
});

describe('definition codec', () => {
  const def = validateDefinition({ name: 'billing', duration: '1m', groupPattern: 'prod.*' });

  it('round-trips', () => {
    expect(decodeDefinition('billing', encodeDefinition(def))).toEqual(def);
  });

  it('rejects a value stored under another name or failing validation', () => {
    expect(() => decodeDefinition('other', encodeDefinition(def))).toThrow(/holds the definition of "billing"/);
    const bad = JSON.stringify({ v: 1, name: 'billing', permits: -2, durationMs: 5, groupPattern: '.*', acquirerPattern: '.*' });
    expect(() => decodeDefinition('billing', bad)).toThrow(CorruptStateError);
  });
});
