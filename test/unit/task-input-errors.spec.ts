import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';

/** The error `run` throws (the test fails if it throws none). */
function thrown(run: () => unknown): InvalidInputError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }
  throw new Error('expected an InvalidInputError');
}

describe('a task\'s bad input names the task and the field', () => {
  it('names the task by its id, or by its type when no id could be made, never as a semaphore', () => {
    const priority = thrown(() => decideSubmit(undefined, { type: 'mail', name: 'welcome-42', priority: 1.5 }, 0, 60_000));
    expect(priority.message).toBe('Task "mail:welcome-42": invalid priority: must be a whole number, got 1.5');
    expect(priority).toMatchObject({ of: 'Task "mail:welcome-42"', field: 'priority', kind: 'task', id: 'mail:welcome-42' });
    const name = thrown(() => decideSubmit(undefined, { type: 'mail' }, 0, 60_000));
    expect(name.message).toBe('Task "mail": invalid name: give either a name (a single task) or a group position');
    expect(name).toMatchObject({ field: 'name', kind: 'task', id: 'mail' });
  });
});
