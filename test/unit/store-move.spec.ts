import { CliUsageError } from '../../lib/cli/cli-errors';
import { movedCapabilities } from '../../lib/cli/store-move';
import { movesText } from '../../lib/cli/cli-cluster-format';

describe('store move: what it is given', () => {
  it('moves permits, schedules, history and tasks, or all four', () => {
    expect(movedCapabilities(['all'])).toEqual(['permits', 'schedules', 'history', 'tasks']);
    expect(movedCapabilities(['history', 'permits', 'permits'])).toEqual(['history', 'permits']);
  });

  it('refuses, naming the capability field, what does not move, before any store is reached', () => {
    const refusal = (given: string[]) => {
      try {
        movedCapabilities(given);
      } catch (error) {
        return error;
      }
      throw new Error('not refused');
    };
    expect(refusal(['presence'])).toMatchObject({ constructor: CliUsageError, field: 'capability', message: expect.stringContaining('presence does not move') });
    expect(refusal(['permit'])).toMatchObject({ field: 'capability', message: expect.stringContaining("'permit' is not permits") });
    expect(refusal([])).toMatchObject({ field: 'capability' });
  });

  it('status says what the store it reads is in a move', () => {
    expect(movesText([])).toBe('');
    const text = movesText([
      { capability: 'permits', state: 'left', other: 'redis', at: Date.UTC(2026, 10, 28, 12) },
      { capability: 'history', state: 'arriving', other: 'postgres', at: Date.UTC(2026, 10, 28, 12) },
      { capability: 'tasks', state: 'left', other: 'redis', at: Date.UTC(2026, 10, 28, 12) },
      { capability: 'history', state: 'left', other: 'redis', at: Date.UTC(2026, 10, 28, 12) },
    ]);
    expect(text).toContain('history: moved to the redis store on 2026-11-28T12:00:00.000Z; the nodes write it there (--backend redis)');
    expect(text).toContain('tasks: moved to the redis store on 2026-11-28T12:00:00.000Z; edits of it here are refused');
    expect(text).toContain('permits: moved to the redis store on 2026-11-28T12:00:00.000Z; edits of it here are refused');
    expect(text).toContain('history: arriving from the postgres store since 2026-11-28T12:00:00.000Z');
  });
});
