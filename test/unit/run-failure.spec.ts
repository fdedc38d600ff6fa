import { decodeHistory, encodeHistory } from '../../lib/schedules/job-history.codec';
import { emptyHistory } from '../../lib/schedules/job-history';
import { boundedStack, runFailure, RUN_STACK_CHARS, type RunRecord } from '../../lib/schedules/run-record';

const frames = (count: number, width = 0) => Array.from({ length: count }, (_, i) => `    at step${i} (/app/dist/${'x'.repeat(width)}ledger.js:${i + 1}:7)`);

/**
 * What a failed run keeps of what it threw: the message (500 characters) and, for an Error, its stack bounded to
 * 20 frames and 2,000 characters, whole lines, with a line saying what was cut; the codec carries it.
 */
describe('a failed run\'s message and stack', () => {
  it('keeps an Error\'s message and stack, and a string or another value as a message alone', () => {
    const error = new Error('ledger out of balance');
    const kept = runFailure(error);
    expect(kept.error).toBe('ledger out of balance');
    expect(kept.stack).toMatch(/^Error: ledger out of balance\n {4}at /);
    expect(kept.stack).toContain('run-failure.spec.ts');
    expect(runFailure('relay down')).toEqual({ error: 'relay down' });
    expect(runFailure({ message: 'from a worker', stack: 'WorkerError: from a worker\n    at remote (/w.js:1:1)' }))
      .toEqual({ error: 'from a worker', stack: 'WorkerError: from a worker\n    at remote (/w.js:1:1)' });
    expect(runFailure(42)).toEqual({ error: '42' });
    expect(runFailure(new Error('x'.repeat(900))).error).toHaveLength(500);
  });

  it('keeps the first 20 frames and says how many more there were', () => {
    const stack = boundedStack(['Error: deep', ...frames(35)].join('\n'));
    const lines = stack.split('\n');
    expect(lines.filter((l) => l.startsWith('    at '))).toEqual(frames(20));
    expect(lines.at(-1)).toBe('    ... 15 more frames');
    expect(boundedStack(['Error: shallow', ...frames(3)].join('\n'))).toBe(['Error: shallow', ...frames(3)].join('\n'));
  });

  it('keeps at most 2,000 characters, cut at a line', () => {
    const stack = boundedStack(['Error: wide', ...frames(20, 150)].join('\n'));
    expect(stack.length).toBeLessThanOrEqual(RUN_STACK_CHARS);
    const lines = stack.split('\n');
    expect(lines.at(-1)).toBe(`    ... (cut at ${RUN_STACK_CHARS} characters)`);
    for (const line of lines.slice(1, -1)) expect(frames(20, 150)).toContain(line);
    // One line longer than the bound is cut inside it.
    expect(boundedStack(`Error: ${'y'.repeat(5000)}`).length).toBeLessThanOrEqual(RUN_STACK_CHARS);
  });

  it('is carried by the history codec, and a history without stacks encodes as before', () => {
    const run: RunRecord = { id: 'n/1:4:1:1', job: 'ledger', trigger: 'schedule', node: 'n', instance: 'n/1', token: 4, startedAt: 1, durationMs: 2, outcome: 'failed', error: 'boom', stack: 'Error: boom\n    at x (/a.js:1:1)' };
    const history = { ...emptyHistory('ledger'), revision: 1, runs: [run], lastFailure: run };
    const decoded = decodeHistory('ledger', encodeHistory(history));
    expect(decoded.runs[0].stack).toBe(run.stack);
    expect(decoded.lastFailure?.stack).toBe(run.stack);
    const plain = { ...run, stack: undefined };
    expect(encodeHistory({ ...history, runs: [plain], lastFailure: undefined })).not.toContain('stack');
    expect(decodeHistory('ledger', encodeHistory({ ...history, runs: [plain] })).runs[0]).not.toHaveProperty('stack');
  });
});
