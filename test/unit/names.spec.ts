import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AllocationService, ClusterSingleton, GatekeeperModule, GatekeeperService, InvalidInputError, LeaderOnly, OncePerTrigger, PostgresBackend, RedisBackend, ScheduleService, SemaphoreAdminService, TaskHandler, TaskService,
} from '../../lib';
import { validateAllocationName } from '../../lib/allocation/allocation-admin';
import { MAX_NAME_LENGTH, nameCharacterProblem, nameInput, nameProblem, shownName } from '../../lib/core/names';
import { validateElectionName } from '../../lib/elections/election-admin';
import { validateDefinition, validateSemaphoreName } from '../../lib/permits/definition.validator';
import { validateMigrationRequest } from '../../lib/permits/group-migration.rules';
import { validateJobName } from '../../lib/schedules/job-request.input';
import { validateScheduleDefinition, validateScheduleId } from '../../lib/schedules/schedule-definition.validator';
import { parseTaskList, validateTaskGroup, validateTaskId } from '../../lib/tasks/task-admin.input';
import { taskId } from '../../lib/tasks/task-id.rules';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';

/** Every control character (C0 with NUL, DEL, C1): none may be in a name. */
const CONTROLS = [
  ...Array.from({ length: 0x20 }, (_, i) => i),
  ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
].map((code) => String.fromCharCode(code));

/** Names that only look dangerous, or are of another script: names on every backend. */
const FINE = ['billing', 'Zahlläufe-😀', '請求', `it's "quoted"`, "x'; DROP TABLE records; --", "]]..redis.call('FLUSHALL')..[[ --", ' padded ', '\u00a0nbsp', 'x'.repeat(MAX_NAME_LENGTH)];

describe('the name rule (lib/core/names)', () => {
  it.each(CONTROLS.map((c) => [`U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`, c]))('refuses %s anywhere in a name, naming it and where', (code, c) => {
    // Escaped in the message as JSON escapes C0, and DEL and C1 the same way (JSON leaves those raw).
    const escaped = c < '\u0020' ? JSON.stringify(c).slice(1, -1) : `\\u${code.slice(2).toLowerCase()}`;
    for (const [name, index, shown] of [[`${c}start`, 0, `${escaped}start`], [`mid${c}dle`, 3, `mid${escaped}dle`], [`end${c}`, 3, `end${escaped}`]] as const) {
      expect(nameCharacterProblem(name)).toBe(`must not contain control characters (${code} at index ${index}), got "${shown}"`);
    }
  });

  it('refuses a lone surrogate, high or low, and takes a pair (an emoji)', () => {
    expect(nameCharacterProblem('a\ud800b')).toBe('must be well-formed Unicode text (a lone surrogate U+D800 at index 1), got "a\\ud800b"');
    expect(nameCharacterProblem('a\udc00')).toBe('must be well-formed Unicode text (a lone surrogate U+DC00 at index 1), got "a\\udc00"');
    expect(nameCharacterProblem('\ud83d')).toMatch(/lone surrogate U\+D83D at index 0/);
    expect(nameCharacterProblem('😀\ud83d')).toMatch(/lone surrogate U\+D83D at index 2/);
    expect(nameCharacterProblem('😀😀')).toBeUndefined();
  });

  it.each(FINE)('takes %j', (name) => {
    expect(nameProblem(name)).toBeUndefined();
    expect(nameInput().parse(name)).toBe(name);
  });

  it.each([
    ['', 'must be a non-empty string, got ""'],
    ['   ', 'must be a non-empty string, got "   "'],
    [5, 'must be a non-empty string, got 5'],
    [undefined, 'must be a non-empty string, got undefined'],
    ['x'.repeat(MAX_NAME_LENGTH + 1), `must be at most ${MAX_NAME_LENGTH} characters, got ${MAX_NAME_LENGTH + 1}`],
    ['x'.repeat(1024), `must be at most ${MAX_NAME_LENGTH} characters, got 1024`],
    ['a\u0000b', 'must not contain control characters (U+0000 at index 1), got "a\\u0000b"'],
  ])('refuses %j: %s', (value, reason) => {
    expect(nameProblem(value)).toBe(reason);
  });

  it('checks the length before the characters, and a kind may give its own length and words', () => {
    expect(nameProblem(`${'x'.repeat(300)}\u0000`)).toBe(`must be at most ${MAX_NAME_LENGTH} characters, got 301`);
    expect(nameProblem('x'.repeat(300), { max: 500 })).toBeUndefined();
    expect(nameProblem('', { what: 'a group name' })).toBe('must be a group name, got ""');
  });

  it('shows a name in an error escaped and cut to 40 characters', () => {
    expect(shownName('a\u0000b\u001b')).toBe('a\\u0000b\\u001b');
    expect(shownName('a\ud800')).toBe('a\\ud800');
    expect(shownName('x'.repeat(41))).toBe(`${'x'.repeat(40)}…`);
    expect(shownName('請求')).toBe('請求');
  });
});

/** Every validator a name enters by, with the error it throws for a NUL and the field that error names. */
const ENTRIES: Array<[string, (name: string) => unknown, new (...args: never[]) => Error, string]> = [
  ['a semaphore name', (n) => validateSemaphoreName(n), InvalidInputError, 'name'],
  ['a definition', (n) => validateDefinition({ name: n, duration: '1m' }), InvalidInputError, 'name'],
  ['a schedule id', (n) => validateScheduleId(n), InvalidInputError, 'id'],
  ['a schedule\'s handler', (n) => validateScheduleDefinition({ id: 'report', cron: '0 3 * * *', duration: '1m', handler: n }), InvalidInputError, 'handler'],
  ['a schedule\'s semaphore', (n) => validateScheduleDefinition({ id: 'report', cron: '0 3 * * *', duration: '1m', handler: 'h', semaphore: n }), InvalidInputError, 'semaphore'],
  ['a job name', (n) => validateJobName(n), InvalidInputError, 'job'],
  ['a task id', (n) => validateTaskId(n), InvalidInputError, 'id'],
  ['a task group\'s type', (n) => validateTaskGroup(n, 'batch'), InvalidInputError, 'type'],
  ['a task group\'s name', (n) => validateTaskGroup('report', n), InvalidInputError, 'name'],
  ['a listing\'s type', (n) => parseTaskList({ types: n }), InvalidInputError, 'type'],
  ['a listing\'s group', (n) => parseTaskList({ group: n }), InvalidInputError, 'group'],
  ['a submitted task\'s type', (n) => taskId({ type: n, name: 'x' }), InvalidInputError, 'type'],
  ['a submitted task\'s name', (n) => taskId({ type: 'report', name: n }), InvalidInputError, 'name'],
  ['a submitted task\'s group', (n) => taskId({ type: 'report', group: { name: n, number: 1 } }), InvalidInputError, 'group.name'],
  ['an election name', (n) => validateElectionName(n), InvalidInputError, 'election'],
  ['an allocation name', (n) => validateAllocationName(n), InvalidInputError, 'allocation'],
  ['a migration\'s target group', (n) => validateMigrationRequest({ fromGroup: 'production', toGroup: n }), InvalidInputError, 'toGroup'],
  ['a migration\'s semaphore names', (n) => validateMigrationRequest({ fromGroup: 'production', toGroup: 'dr-site', names: [n] }), InvalidInputError, 'names'],
];

describe('every validator a name enters by applies the rule', () => {
  it.each(ENTRIES)('%s: a NUL, a C1 control or a lone surrogate is refused naming the field; odd names pass', (_, validate, type, field) => {
    for (const bad of ['bad\u0000name', 'bad\u0085name', 'bad\ud800name']) {
      const error = (() => {
        try {
          validate(bad);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(type);
      expect((error as { field: string }).field).toBe(field);
      expect((error as Error).message).toMatch(/control characters \(U\+00(00|85) at index 3\)|lone surrogate U\+D800 at index 3/);
      // The message is safe to log: the name in it is escaped.
      expect([...(error as Error).message].filter((c) => ['\u0000', '\u0085', '\ud800'].includes(c))).toEqual([]);
    }
    for (const fine of ['Zahlläufe-😀', '請求', "x'; DROP TABLE t; --"]) expect(() => validate(fine)).not.toThrow();
  });
});

describe('module options and decorators refuse a hostile name at start-up', () => {
  const compile = (options: object) =>
    Test.createTestingModule({ imports: [GatekeeperModule.forRoot({ backend: 'memory', membership: false, ...options })] })
      .setLogger(new CapturingLogger()).compile().then(() => undefined, (error: unknown) => error);

  it.each([
    ['definitions[0].name', { definitions: [{ name: 'billing\u0000', duration: '1m' }] }],
    ['definitions[1].name', { definitions: [{ name: 'ok', duration: '1m' }, { name: 'x'.repeat(1024), duration: '1m' }] }],
    ['identity.acquirer', { identity: { acquirer: 'node\u0000a' } }],
    ['identity.group', { identity: { group: 'prod\u009b' } }],
    ['elections[0].name', { elections: ['leader\u0007'] }],
    ['elections[0].name', { elections: [{ name: 'leader\ud800' }] }],
    ['allocations[0].name', { allocations: [{ name: 'queues\u007f' }] }],
    ['hazelcast.mapPrefix', { hazelcast: { mapPrefix: 'gatekeeper\u0000' } }],
  ])('%s', async (field, options) => {
    const error = await compile(options);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).field).toBe(field);
    expect((error as Error).message).toMatch(new RegExp(`^GatekeeperModule options: invalid ${field.replace(/[[\].]/g, '\\$&')}: .*(control characters|lone surrogate|at most)`));
  });

  it('a backend\'s mapPrefix (in every key it writes) follows the rule too', () => {
    for (const make of [
      () => new PostgresBackend({ connectionString: 'postgres://127.0.0.1:1/none', mapPrefix: 'gatekeeper\u0000' }),
      () => new RedisBackend({ url: 'redis://127.0.0.1:1', mapPrefix: 'gatekeeper\u0085' }),
    ]) {
      expect(make).toThrow(InvalidInputError);
      expect(make).toThrow(/^GatekeeperModule options: invalid (postgres|redis)\.mapPrefix: must not contain control characters/);
    }
    expect(() => new RedisBackend({ url: 'redis://127.0.0.1:1', mapPrefix: '{app}' })).toThrow(/invalid redis\.mapPrefix: must be without \{ or \}/);
  });

  it('takes odd but fine names in the options', async () => {
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        backend: 'memory',
        membership: false,
        identity: { acquirer: 'knoten-ä-😀', group: '請求' },
        definitions: [{ name: "x'; DROP TABLE records; --", duration: '1m' }],
        elections: ['Führung'],
      })],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    expect(await app.get(GatekeeperService).tryAcquire("x'; DROP TABLE records; --")).toMatchObject({ granted: true });
    await app.close();
  });

  it.each([
    ['@ClusterSingleton', () => ClusterSingleton('billing\u0000', '1m'), InvalidInputError, 'name'],
    ['@ClusterSingleton({ semaphore })', () => ClusterSingleton({ semaphore: 'x'.repeat(1024) }), InvalidInputError, 'name'],
    ['@LeaderOnly', () => LeaderOnly('leader\u001b'), InvalidInputError, 'election'],
    ['@TaskHandler', () => TaskHandler('report\u0000'), InvalidInputError, undefined],
    ['@OncePerTrigger', () => OncePerTrigger('check\u0085'), InvalidInputError, undefined],
  ] as const)('%s', (_, decorate, type, field) => {
    let error: unknown;
    try {
      @Injectable()
      class Jobs {
        @(decorate() as MethodDecorator)
        run(): void {}
      }
      void Jobs;
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(type);
    expect((error as { field?: string }).field).toBe(field);
    expect((error as Error).message).toMatch(/control characters|at most/);
  });
});

describe('the services refuse a hostile name before any store call', () => {
  const NUL = 'bad\u0000name';

  it('GatekeeperService, SemaphoreAdminService, ScheduleService, TaskService, AllocationService', async () => {
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', membership: false, definitions: [{ name: 'billing', duration: '1m' }] })],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    const [gatekeeper, semaphores, schedules, tasks, allocations] = [
      app.get(GatekeeperService), app.get(SemaphoreAdminService), app.get(ScheduleService), app.get(TaskService), app.get(AllocationService),
    ];
    const calls: Array<[string, () => unknown, new (...args: never[]) => Error, string]> = [
      ['tryAcquire', () => gatekeeper.tryAcquire(NUL), InvalidInputError, 'name'],
      ['acquire', () => gatekeeper.acquire(NUL, { timeout: 'soon' }), InvalidInputError, 'name'],
      ['withPermit', () => gatekeeper.withPermit(NUL, () => undefined), InvalidInputError, 'name'],
      ['putDefinition', () => semaphores.putDefinition({ name: NUL, duration: '1m' }), InvalidInputError, 'name'],
      ['readDefinition', () => semaphores.readDefinition(NUL), InvalidInputError, 'name'],
      ['updateDefinition', () => semaphores.updateDefinition(NUL, null as never), InvalidInputError, 'name'],
      ['removeDefinition', () => semaphores.removeDefinition(NUL), InvalidInputError, 'name'],
      ['pause', () => semaphores.pause(NUL), InvalidInputError, 'name'],
      ['resume', () => semaphores.resume(NUL), InvalidInputError, 'name'],
      ['forceRelease', () => semaphores.forceRelease(NUL, Number.NaN), InvalidInputError, 'name'],
      ['resetPermits', () => semaphores.resetPermits(NUL), InvalidInputError, 'name'],
      ['migrate', () => semaphores.migrate('production', NUL), InvalidInputError, 'toGroup'],
      ['history', () => schedules.history(NUL), InvalidInputError, 'job'],
      ['describe', () => schedules.describe(NUL), InvalidInputError, 'job'],
      ['runNow', () => schedules.runNow(NUL), InvalidInputError, 'job'],
      ['pauseJob', () => schedules.pauseJob(NUL), InvalidInputError, 'job'],
      ['resumeJob', () => schedules.resumeJob(NUL), InvalidInputError, 'job'],
      ['schedule', () => schedules.schedule(NUL), InvalidInputError, 'id'],
      ['upsert', () => schedules.upsert({ id: NUL, cron: '0 3 * * *', duration: '1m', handler: 'h' }), InvalidInputError, 'id'],
      ['remove', () => schedules.remove(NUL), InvalidInputError, 'id'],
      ['submit', () => tasks.submit({ type: 'report', name: NUL }), InvalidInputError, 'name'],
      ['get', () => tasks.get(NUL), InvalidInputError, 'id'],
      ['retry', () => tasks.retry(NUL), InvalidInputError, 'id'],
      ['cancel', () => tasks.cancel(NUL), InvalidInputError, 'id'],
      ['group', () => tasks.group('report', NUL), InvalidInputError, 'name'],
      ['list', () => tasks.list({ types: [NUL] }), InvalidInputError, 'type'],
      ['purge', () => tasks.purge({ types: [NUL] }), InvalidInputError, 'type'],
      ['participate', () => allocations.participate(NUL, { resources: () => [] }), InvalidInputError, 'allocation'],
    ];
    const outcomes: string[] = [];
    for (const [method, call, type, field] of calls) {
      const error = await (async () => call())().then(() => undefined, (caught: unknown) => caught);
      outcomes.push(error instanceof type && (error as { field?: string }).field === field && /control characters/.test((error as Error).message)
        ? `${method}: ${type.name} on ${field}`
        : `${method}: ${String(error)}`);
    }
    expect(outcomes).toEqual(calls.map(([method, , type, field]) => `${method}: ${type.name} on ${field}`));
    await app.close();
  });
});

describe('an allocation\'s resources are names too', () => {
  it('a resource set with a control character in one id is refused (logged, nothing assigned); a set of odd ids is taken as given', async () => {
    const logger = new CapturingLogger();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', membership: { interval: '200ms' }, allocations: [{ name: 'queues', lease: '2s', rebalanceDelay: 0 }] })],
    }).setLogger(logger).compile();
    await app.init();
    const allocations = app.get(AllocationService);
    let resources = ['queue-1', 'queue\u00002'];
    allocations.participate('queues', { resources: () => resources });
    await eventually('the bad set to be refused', () => logger.find('warn', /resources\(\) failed: resources\(\) of "queues" must return names: #2 must not contain control characters \(U\+0000 at index 5\), got "queue\\u00002"/).length > 0);
    expect(allocations.owned('queues')).toEqual([]);
    resources = ['Zahlläufe-😀', '請求', "x'; DROP TABLE t; --"];
    await allocations.resourcesChanged('queues');
    await eventually('the odd ids to be owned', () => allocations.owned('queues').length === 3);
    expect(allocations.owned('queues')).toEqual([...resources].sort());
    await app.close();
  });
});
