import { durationInput, absentAs, omittable, regexInput, trueOrFalseInput, wholeNumberInput } from '../../lib/core/input-fields';

/** The message of the first issue, or the output. */
function outcome(schema: { safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: { issues: Array<{ message: string }> } } }, value: unknown): unknown {
  const result = schema.safeParse(value);
  return result.success ? result.data : { reason: result.error.issues[0].message };
}

describe('operator input fields', () => {
  it('reads a whole number as JSON or as digits, in range, and names the value as given when it is not one', () => {
    const limit = wholeNumberInput({ min: 1, max: 10 }, (given) => `must be from 1 to 10, got ${JSON.stringify(given)}`);
    expect([outcome(limit, 3), outcome(limit, '10')]).toEqual([3, 10]);
    for (const [given, shown] of [['0', '"0"'], [11, '11'], [' 5', '" 5"'], ['5.0', '"5.0"'], [-1, '-1'], [2 ** 53, '9007199254740992'], [true, 'true']] as const) {
      expect(outcome(limit, given)).toEqual({ reason: `must be from 1 to 10, got ${shown}` });
    }
  });

  it('leaves out an absent or empty value', () => {
    const limit = omittable(wholeNumberInput({ min: 1 }, () => 'bad'));
    expect([outcome(limit, undefined), outcome(limit, ''), outcome(limit, '2'), outcome(limit, ' ')]).toEqual([undefined, undefined, 2, { reason: 'bad' }]);
  });

  it('reads true or false as JSON or text, and nothing else', () => {
    expect([true, 'true', false, 'false'].map((given) => outcome(trueOrFalseInput, given))).toEqual([true, true, false, false]);
    expect(outcome(trueOrFalseInput, 'yes')).toEqual({ reason: 'must be true or false, got "yes"' });
  });

  it("reads a duration with parseDuration's reasons, and a longer one than allowed against the value as given", () => {
    const timeout = durationInput({ max: 60_000 });
    expect([outcome(timeout, '30s'), outcome(timeout, 1500)]).toEqual([30_000, 1500]);
    expect(outcome(timeout, 'soon')).toEqual({ reason: "cannot parse 'soon' as a duration (use milliseconds or '500ms', '30s', '5m', '1h')" });
    expect(outcome(timeout, 0)).toEqual({ reason: 'must be more than zero, got 0' });
    expect(outcome(durationInput({ allowZero: true }), '0s')).toBe(0);
    expect(outcome(timeout, '2m')).toEqual({ reason: 'must be at most 1m, got "2m"' });
  });

  it('takes the default for an absent or null value, and checks any other', () => {
    const permits = absentAs(1, wholeNumberInput({ min: 0 }, (given) => `bad ${JSON.stringify(given)}`));
    expect([outcome(permits, undefined), outcome(permits, null), outcome(permits, 0), outcome(permits, 3)]).toEqual([1, 1, 0, 3]);
    expect(outcome(permits, -1)).toEqual({ reason: 'bad -1' });
  });

  it('reads a regex that compiles, showing anything else as the caller shows values', () => {
    const pattern = regexInput((given) => JSON.stringify(given));
    expect(outcome(pattern, 'prod|dr')).toBe('prod|dr');
    expect([outcome(pattern, ''), outcome(pattern, 5), outcome(pattern, null)]).toEqual([
      { reason: 'must be a non-empty regex string, got ""' },
      { reason: 'must be a non-empty regex string, got 5' },
      { reason: 'must be a non-empty regex string, got null' },
    ]);
    expect(outcome(pattern, 'prod(')).toEqual({ reason: expect.stringMatching(/^'prod\(' is not a valid regex: /) });
  });
});
