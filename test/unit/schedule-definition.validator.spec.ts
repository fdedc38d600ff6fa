import { decodeScheduleRecord, encodeScheduleRecord } from '../../lib/schedules/schedule-record.codec';
import { MAX_SCHEDULE_DATA_BYTES, type ScheduleDefinitionInput } from '../../lib/schedules/schedule-definition';
import { toScheduleInput, validateScheduleDefinition } from '../../lib/schedules/schedule-definition.validator';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';

const base: ScheduleDefinitionInput = { id: 'tenant-7-report', cron: '0 3 * * *', handler: 'report', duration: '5m' };

describe('validateScheduleDefinition', () => {
  it('fills every default: UTC, null data, not paused, schedule:<id> with 1 permit, any group and acquirer, skip and skip', () => {
    expect(validateScheduleDefinition(base)).toEqual({
      id: 'tenant-7-report',
      cron: '0 3 * * *',
      timeZone: 'UTC',
      handler: 'report',
      data: null,
      paused: false,
      semaphore: 'schedule:tenant-7-report',
      permits: 1,
      durationMs: 300_000,
      groupPattern: '.*',
      acquirerPattern: '.*',
      missedRuns: 'skip',
      overlap: 'skip',
    });
  });

  it("defaults a policy's option only with that policy: catchUpWindow 1h with runOnce, replaceWait 30s with replace", () => {
    const d = validateScheduleDefinition({ ...base, missedRuns: 'runOnce', overlap: 'replace' });
    expect(d).toMatchObject({ missedRuns: 'runOnce', catchUpWindowMs: 3_600_000, overlap: 'replace', replaceWaitMs: 30_000 });
    expect(validateScheduleDefinition({ ...base, missedRuns: 'runOnce', catchUpWindow: '10m' }).catchUpWindowMs).toBe(600_000);
  });

  it('keeps health only when given, its thresholds filled in; refuses a bad one naming the schedule and the field; round-trips it', () => {
    expect(validateScheduleDefinition(base)).not.toHaveProperty('health');
    const d = validateScheduleDefinition({ ...base, health: { grace: '5m', failureThreshold: 3 } });
    expect(d.health).toEqual({ graceMs: 300_000, failureThreshold: 3, recoveryThreshold: 1 });
    expect(validateScheduleDefinition({ ...base, health: {} }).health).toEqual({ failureThreshold: 1, recoveryThreshold: 1 });
    expect(validateScheduleDefinition(toScheduleInput(d))).toEqual(d);
    expect(() => validateScheduleDefinition({ ...base, health: { failureThreshold: 0 } })).toThrow(/Schedule "tenant-7-report".*health\.failureThreshold.*whole number from 1 to 1000/);
    expect(() => validateScheduleDefinition({ ...base, health: { grace: 'later' } })).toThrow(/health\.grace/);
    expect(() => validateScheduleDefinition({ ...base, health: { lateAfter: '5m' } as never })).toThrow(/health\.lateAfter.*is not an option/);
  });

  it('keeps checkIn only when given, resolved to its URLs; refuses a bad one naming the field; round-trips it, through the store\'s codec too', () => {
    expect(validateScheduleDefinition(base)).not.toHaveProperty('checkIn');
    const d = validateScheduleDefinition({ ...base, checkIn: { healthchecks: 'https://hc-ping.com/abc', timeout: '3s' } });
    expect(d.checkIn).toEqual({ start: 'https://hc-ping.com/abc/start?rid={run}', success: 'https://hc-ping.com/abc?rid={run}', failure: 'https://hc-ping.com/abc/fail?rid={run}', timeoutMs: 3_000 });
    expect(validateScheduleDefinition(toScheduleInput(d))).toEqual(d);
    const record = { id: d.id, revision: 1, updatedAt: 1, updatedBy: 'a', writeId: 'w', definition: d };
    expect(decodeScheduleRecord(d.id, encodeScheduleRecord(record as never)).definition).toEqual(d);
    expect(() => validateScheduleDefinition({ ...base, checkIn: { success: 'ftp://monitor/x' } })).toThrow(/Schedule "tenant-7-report".*checkIn\.success.*http\(s\) URL/);
    expect(() => validateScheduleDefinition({ ...base, checkIn: { healthchecks: 'https://hc-ping.com/abc', failure: 'https://x' } as never })).toThrow(/checkIn\.failure/);
  });

  it('writes the cron expression with single spaces, and 6-field expressions (seconds first) are accepted', () => {
    expect(validateScheduleDefinition({ ...base, cron: '  0   3 * *\t* ' }).cron).toBe('0 3 * * *');
    expect(validateScheduleDefinition({ ...base, cron: '*/10 * * * * *' }).cron).toBe('*/10 * * * * *');
  });

  it('stores data canonically: keys sorted at every depth, -0 as 0, undefined members left out', () => {
    const d = validateScheduleDefinition({ ...base, data: { b: 1, a: { d: [1, { z: true, y: null }], c: -0 }, skip: undefined } as never });
    expect(JSON.stringify(d.data)).toBe('{"a":{"c":0,"d":[1,{"y":null,"z":true}]},"b":1}');
    // A __proto__ key is data, not the object's prototype.
    const parsed = JSON.parse('{"__proto__": {"x": 1}, "a": 2}');
    expect(JSON.stringify(validateScheduleDefinition({ ...base, data: parsed }).data)).toBe('{"__proto__":{"x":1},"a":2}');
  });

  it('asks the cron validator it is given, with the expression and the zone, and names its reason', () => {
    const asked: Array<[string, string]> = [];
    const validateCron = (expr: string, zone: string) => {
      asked.push([expr, zone]);
      return expr.startsWith('61') ? 'minute 61 is out of range' : undefined;
    };
    expect(validateScheduleDefinition({ ...base, timeZone: 'Europe/Berlin' }, { validateCron }).cron).toBe('0 3 * * *');
    expect(asked).toEqual([['0 3 * * *', 'Europe/Berlin']]);
    expect(() => validateScheduleDefinition({ ...base, cron: '61 * * * *' }, { validateCron })).toThrow(
      `Schedule "tenant-7-report": invalid cron: '61 * * * *' in UTC: minute 61 is out of range`,
    );
    const throwing = () => {
      throw new Error('bad step');
    };
    expect(() => validateScheduleDefinition(base, { validateCron: throwing })).toThrow(/invalid cron: .*bad step/);
  });

  it('gives back the input it came from (toScheduleInput), which validates to the same definition', () => {
    const d = validateScheduleDefinition({ ...base, data: { x: 1 }, missedRuns: 'runOnce', overlap: 'replace', replaceWait: '5s', permits: 2 });
    expect(validateScheduleDefinition(toScheduleInput(d))).toEqual(d);
  });

  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const cases: Array<[string, unknown, string, string, RegExp]> = [
    ['not an object', 'nope', '<unnamed>', 'definition', /must be an object/],
    ['missing id', { ...base, id: undefined }, '<unnamed>', 'id', /non-empty string/],
    ['blank id', { ...base, id: '  ' }, '<unnamed>', 'id', /non-empty string/],
    ['number id', { ...base, id: 7 }, '<unnamed>', 'id', /non-empty string/],
    ['over-long id', { ...base, id: 'x'.repeat(192) }, `${'x'.repeat(40)}…`, 'id', /at most 191 characters/],
    ['id in the leader-work names', { ...base, id: 'leader:leader:Reports.send' }, 'leader:leader:Reports.send', 'id', /must not start with "leader:"/],
    ['unknown field', { ...base, timezone: 'UTC' }, 'tenant-7-report', 'timezone', /not a schedule field/],
    ['missing cron', { ...base, cron: undefined }, 'tenant-7-report', 'cron', /5 or 6 fields/],
    ['cron of 4 fields', { ...base, cron: '* * * *' }, 'tenant-7-report', 'cron', /has 4 fields/],
    ['cron of 7 fields', { ...base, cron: '0 0 0 * * * 2030' }, 'tenant-7-report', 'cron', /has 7 fields/],
    ['unknown time zone', { ...base, timeZone: 'Mars/Olympus' }, 'tenant-7-report', 'timeZone', /not an IANA time zone/],
    ['number time zone', { ...base, timeZone: 1 }, 'tenant-7-report', 'timeZone', /IANA time zone/],
    ['missing handler', { ...base, handler: undefined }, 'tenant-7-report', 'handler', /non-empty string/],
    ['blank handler', { ...base, handler: ' ' }, 'tenant-7-report', 'handler', /non-empty string/],
    ['over-long handler', { ...base, handler: 'h'.repeat(201) }, 'tenant-7-report', 'handler', /at most 200/],
    ['function in data', { ...base, data: { run: () => 1 } }, 'tenant-7-report', 'data.run', /got a function/],
    ['NaN in data', { ...base, data: { ids: [1, Number.NaN] } }, 'tenant-7-report', 'data.ids[1]', /got NaN/],
    ['undefined in a data array', { ...base, data: [1, undefined] }, 'tenant-7-report', 'data[1]', /got undefined/],
    ['a Date in data', { ...base, data: { at: new Date(0) } }, 'tenant-7-report', 'data.at', /Date \(store its ISO string\)/],
    ['a bigint in data', { ...base, data: 1n }, 'tenant-7-report', 'data', /got a bigint/],
    ['a cycle in data', { ...base, data: cycle }, 'tenant-7-report', 'data.self', /cycle/],
    ['data over the limit', { ...base, data: 'x'.repeat(MAX_SCHEDULE_DATA_BYTES) }, 'tenant-7-report', 'data', /at most 65536 bytes as JSON, got 65538/],
    ['string paused', { ...base, paused: 'yes' }, 'tenant-7-report', 'paused', /true or false/],
    ['empty semaphore', { ...base, semaphore: '' }, 'tenant-7-report', 'semaphore', /non-empty/],
    ['over-long semaphore', { ...base, semaphore: 's'.repeat(201) }, 'tenant-7-report', 'semaphore', /at most 200/],
    ['an election semaphore', { ...base, semaphore: 'election:leader' }, 'tenant-7-report', 'semaphore', /leader election/],
    ['zero permits', { ...base, permits: 0 }, 'tenant-7-report', 'permits', /1 or more \(pause with paused: true\)/],
    ['fractional permits', { ...base, permits: 1.5 }, 'tenant-7-report', 'permits', /whole number/],
    ['string permits', { ...base, permits: '2' }, 'tenant-7-report', 'permits', /whole number/],
    ['missing duration', { ...base, duration: undefined }, 'tenant-7-report', 'duration', /expected milliseconds/],
    ['unparsable duration', { ...base, duration: 'soon' }, 'tenant-7-report', 'duration', /cannot parse 'soon'/],
    ['invalid group regex', { ...base, groupPattern: 'prod(' }, 'tenant-7-report', 'groupPattern', /not a valid regex/],
    ['empty acquirer pattern', { ...base, acquirerPattern: '' }, 'tenant-7-report', 'acquirerPattern', /non-empty regex/],
    ['invalid acquirer regex', { ...base, acquirerPattern: '[a-' }, 'tenant-7-report', 'acquirerPattern', /not a valid regex/],
    ['unknown missedRuns', { ...base, missedRuns: 'sometimes' }, 'tenant-7-report', 'missedRuns', /'skip' or 'runOnce', got 'sometimes'/],
    ['catchUpWindow with skip', { ...base, catchUpWindow: '1h' }, 'tenant-7-report', 'catchUpWindow', /only applies to missedRuns: 'runOnce'/],
    ['bad catchUpWindow', { ...base, missedRuns: 'runOnce', catchUpWindow: 'later' }, 'tenant-7-report', 'catchUpWindow', /cannot parse 'later'/],
    ['unknown overlap', { ...base, overlap: 'queue' }, 'tenant-7-report', 'overlap', /'skip' or 'replace', got 'queue'/],
    ['replaceWait with skip', { ...base, replaceWait: '5s' }, 'tenant-7-report', 'replaceWait', /only applies to overlap: 'replace'/],
    ['bad replaceWait', { ...base, overlap: 'replace', replaceWait: -5 }, 'tenant-7-report', 'replaceWait', /more than zero/],
  ];
  it.each(cases)('rejects %s, naming the schedule and the field', (_, input, schedule, field, reason) => {
    let error: unknown;
    try {
      validateScheduleDefinition(input as ScheduleDefinitionInput);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ kind: 'schedule', id: schedule, field });
    const message = (error as Error).message;
    expect(message.startsWith(`Schedule "${schedule}": invalid ${field}: `)).toBe(true);
    expect(message).toMatch(reason);
  });
});
