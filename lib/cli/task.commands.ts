import { refuseUnknownSubcommands } from './unknown-subcommand';
import type { Command } from 'commander';
import type { TaskRecord, TaskState } from '../store/tasks/task';
import type { TaskGroupStatus, TaskStateCounts } from '../tasks/task-admin';
import { parseTaskList, parseTaskPurge, validateTaskGroup, validateTaskId } from '../tasks/task-admin.input';
import type { Action, Execute } from './cli-command';
import { formatAge } from './cli-cluster-format';
import { CliUsageError } from './cli-errors';
import { renderTable } from './cli-table';
import { InvalidInputError } from '../core/errors/invalid-input.error';
import { unknownTask } from '../tasks/errors/task.errors';

const STATES: readonly TaskState[] = ['pending', 'running', 'done', 'failed', 'invalid', 'cancelled'];

/** A filter given on the command line, checked before connecting: a usage error names the option. */
function checked<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidInputError) {
      const option = { state: '--state', limit: '--limit', group: '--group', olderThan: '--older-than' }[error.field ?? ''] ?? error.field;
      throw new CliUsageError(`invalid ${option}: ${error.reason}`, error.field);
    }
    throw error;
  }
}

/**
 * Adds `tasks` and its subcommands (distributed tasks, seed 004): counts by type and state, listings with filters,
 * one task with its attempts, retry, cancel, purge, and group progress. Read from and written to the cluster.
 */
export function addTaskCommands(program: Command, execute: Execute): void {
  const tasks = refuseUnknownSubcommands(program.command('tasks')).description('distributed tasks: counts by type and state (subcommands: list, show, retry, cancel, purge, group)');
  const run = (check: () => Action) => execute(check);

  tasks.command('counts', { isDefault: true }).description('tasks by type and state').action(() =>
    run(() => async (_admin, stores) => {
      const counts = await (await stores.tasks()).counts();
      return { json: counts, text: countsText(counts) };
    }),
  );

  tasks
    .command('list')
    .description('tasks in claim order (highest priority first, then submit order)')
    .option('--type <types>', 'only these types (comma-separated)')
    .option('--state <states>', `only these states (comma-separated: ${STATES.join(', ')})`)
    .option('--group <name>', 'only the tasks of this group')
    .option('--limit <n>', 'at most this many', '100')
    .action((o: { type?: string; state?: string; group?: string; limit: string }) =>
      run(() => {
        const { query, limit } = checked(() => parseTaskList({ types: o.type, states: o.state, group: o.group, limit: o.limit }));
        return async (_admin, stores) => {
          const list = await (await stores.tasks()).list(query, limit);
          return { json: list, text: listText(list) };
        };
      }),
    );

  tasks.command('show <id>').description('one task: its state, claim, result, and every attempt with who ran it, its epoch and its error').action((id: string) =>
    run(() => {
      checked(() => validateTaskId(id));
      return async (_admin, stores) => {
        const task = await (await stores.tasks()).get(id);
        if (!task) throw unknownTask(id);
        return { json: task, text: taskText(task) };
      };
    }),
  );

  tasks.command('retry <id>').description('run a failed, invalid or cancelled task again (its group waits for it and joins again)').action((id: string) =>
    run(() => {
      checked(() => validateTaskId(id));
      return async (_admin, stores) => {
        await stores.editing('tasks');
        const task = await (await stores.tasks()).retry(id);
        return { json: task, text: `task ${task.id} is pending again (up to ${task.maxAttempts ?? '?'} attempts in all)` };
      };
    }),
  );

  tasks.command('cancel <id>').description('cancel a pending or running task (a running handler is told at its next renewal)').action((id: string) =>
    run(() => {
      checked(() => validateTaskId(id));
      return async (_admin, stores) => {
        await stores.editing('tasks');
        const task = await (await stores.tasks()).cancel(id);
        return { json: task, text: `task ${task.id} is cancelled` };
      };
    }),
  );

  tasks
    .command('purge')
    .description('remove finished tasks now (their ids can be submitted again)')
    .option('--type <types>', 'only these types (comma-separated)')
    .option('--state <states>', 'only these finished states (comma-separated: done, failed, invalid, cancelled)')
    .option('--older-than <duration>', "only tasks finished at least this long ago ('1h', '30m', ms)")
    .action((o: { type?: string; state?: string; olderThan?: string }) =>
      run(() => {
        const options = checked(() => parseTaskPurge({ types: o.type, states: o.state, olderThan: o.olderThan }));
        return async (_admin, stores) => {
          await stores.editing('tasks');
          const purged = await (await stores.tasks()).purge(options);
          return { json: { purged }, text: `purged ${purged} finished task(s)` };
        };
      }),
    );

  tasks.command('group <type> <name>').description("a group's progress: its tasks by state, how many ended and failed, its join").action((type: string, name: string) =>
    run(() => {
      checked(() => validateTaskGroup(type, name));
      return async (_admin, stores) => {
        const group = await (await stores.tasks()).group(type, name);
        if (!group) throw unknownTask(`${type}:${name} (a group)`);
        return { json: group, text: groupText(group) };
      };
    }),
  );
}

/** Counts as a table: one row per type. */
export function countsText(counts: Record<string, TaskStateCounts>): string {
  const types = Object.keys(counts).sort();
  if (types.length === 0) return 'no tasks';
  return renderTable(['TYPE', ...STATES.map((s) => s.toUpperCase())], types.map((type) => [type, ...STATES.map((s) => counts[type][s])]));
}

function holder(task: TaskRecord): string {
  return task.claim ? `${task.claim.acquirer} (epoch ${task.claim.epoch})` : '-';
}

/** A listing as a table. */
export function listText(list: readonly TaskRecord[], now = Date.now()): string {
  if (list.length === 0) return 'no tasks match';
  return renderTable(
    ['ID', 'STATE', 'PRIORITY', 'ATTEMPTS', 'HOLDER', 'AGE'],
    list.map((t) => [t.id, t.state, t.priority, t.attempts.length, t.state === 'running' ? holder(t) : '-', formatAge(now - t.submittedAt)]),
  );
}

/** One task with its attempts. */
export function taskText(t: TaskRecord, now = Date.now()): string {
  const lines = [
    `task ${t.id}: ${t.state}, priority ${t.priority}, submitted ${formatAge(now - t.submittedAt)} ago${t.finishedAt ? `, finished ${formatAge(now - t.finishedAt)} ago` : ''}`,
  ];
  if (t.group) lines.push(`group ${t.group.name}, number ${t.group.number}${t.group.total ? ` of ${t.group.total}` : ''}${t.group.failGroupFast ? ', fail fast' : ''}`);
  if (t.parent) lines.push(`parent ${t.parent}`);
  if (t.claim && t.state === 'running') lines.push(`held by ${holder(t)}, lease ${t.claim.expiresAt > now ? `${formatAge(t.claim.expiresAt - now)} left` : 'lapsed'}`);
  if (t.result !== undefined) lines.push(`result ${JSON.stringify(t.result)}`);
  lines.push(`data ${JSON.stringify(t.data)}`);
  lines.push(t.attempts.length === 0
    ? 'no attempts yet'
    : renderTable(['#', 'BY', 'EPOCH', 'OUTCOME', 'TOOK', 'ERROR'], t.attempts.map((a, i) => [
      i + 1, a.acquirer, a.epoch, a.outcome ?? 'running', a.endedAt === undefined ? '-' : formatAge(a.endedAt - a.startedAt), a.error ?? '',
    ])));
  return lines.join('\n');
}

/** A group's progress. */
export function groupText(g: TaskGroupStatus): string {
  const states = STATES.filter((s) => g.states[s] > 0).map((s) => `${g.states[s]} ${s}`).join(', ') || 'no tasks stored';
  const join = g.joinSubmittedAt === undefined ? 'not yet' : `submitted${g.join ? `, ${g.join}` : ''}`;
  return [
    `group ${g.id}${g.round ? ` (round ${g.round})` : ''}: ${g.finished}${g.total === undefined ? '' : `/${g.total}`} ended, ${g.failed} failed${g.failGroupFast ? ' (fail fast)' : ''}`,
    `tasks: ${states}`,
    `join: ${join}${g.parent ? `; parent ${g.parent}` : ''}`,
  ].join('\n');
}
