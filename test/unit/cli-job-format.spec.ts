import { pauseText, runNowText } from '../../lib/cli/cli-job-format';
import { parseJobForce } from '../../lib/schedules/job-request.input';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';

describe('jobs pause and resume, as the CLI prints them', () => {
  it('names the semaphore, its permits, and the other jobs sharing it', () => {
    expect(pauseText({ job: 'Billing.charge', paused: true, by: 'semaphore', semaphore: 'billing', permits: 0, alsoAffected: ['Billing.refund', 'tenant-export'] }, 'app-1')).toBe(
      'paused Billing.charge: its semaphore billing paused (permits 0) (asked via app-1)\n' +
      'also paused, sharing the semaphore billing: Billing.refund, tenant-export',
    );
    expect(pauseText({ job: 'Billing.charge', paused: false, by: 'semaphore', semaphore: 'billing', permits: 3, alsoAffected: ['Billing.refund'] }, 'app-2')).toBe(
      'resumed Billing.charge: its semaphore billing has 3 permit(s) (asked via app-2)\n' +
      'also resumed, sharing the semaphore billing: Billing.refund',
    );
  });

  it('says a runtime schedule was paused alone, at which revision', () => {
    expect(pauseText({ job: 'report-acme', paused: true, by: 'schedule', semaphore: 'schedule:report-acme', revision: 7, alsoAffected: [] }, 'app-1'))
      .toBe('paused report-acme: its runtime schedule paused, revision 7 (asked via app-1)');
  });
});

describe('force of a pause by job name', () => {
  it('takes true or false, as the query string or a boolean, and refuses anything else naming the field', () => {
    expect(parseJobForce('Billing.charge', undefined)).toEqual({});
    expect(parseJobForce('Billing.charge', 'false')).toEqual({});
    expect(parseJobForce('Billing.charge', 'true')).toEqual({ force: true });
    expect(parseJobForce('Billing.charge', true)).toEqual({ force: true });
    const error = (() => {
      try {
        parseJobForce('Billing.charge', 'yes');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ kind: 'job', id: 'Billing.charge', field: 'force' });
  });
});

describe('jobs run --wait, as the CLI prints a failed run', () => {
  it('prints the error and, under it, the stack the run kept', () => {
    const text = runNowText({
      requestId: 'r1', job: 'Billing.charge', node: 'app-1', instance: 'app-1/x', token: 7, startedAt: Date.parse('2026-11-26T04:00:00Z'),
      outcome: 'failed', durationMs: 12, error: 'the payment provider answered 502',
      stack: 'Error: the payment provider answered 502\n    at Billing.charge (src/billing.ts:20:11)',
    }, 'app-1');
    expect(text.split('\n').slice(1, 4)).toEqual([
      'it failed in 12 ms: the payment provider answered 502',
      '    Error: the payment provider answered 502',
      '    at Billing.charge (src/billing.ts:20:11)',
    ]);
  });
});
