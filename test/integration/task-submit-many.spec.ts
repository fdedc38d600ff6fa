import { Test, type TestingModule } from '@nestjs/testing';
import Redis from 'ioredis';
import { GatekeeperModule, InvalidInputError, TaskService, type SubmitInput } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { declareTestPrefix, testBackendOptions, type TestBackend } from '../support/test-backends';
import { uniquePrefix } from '../support/test-cluster';

/**
 * `TaskService.submitMany` on each backend's real server: every input checked before anything is submitted (a bad
 * one named by its place and field), the tasks answered in the order given, an id that exists kept as it is, and on
 * Redis the submits sent together (a few script calls for hundreds of tasks, not one each).
 */
describe.each<TestBackend>(['hazelcast', 'postgres', 'redis'])('submitMany on %s', (backend) => {
  let app: TestingModule;
  let tasks: TaskService;

  beforeAll(async () => {
    const mapPrefix = uniquePrefix(`submit-many-${backend}`);
    await declareTestPrefix(backend, mapPrefix);
    app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ identity: { acquirer: 'submitter' }, membership: false, ...testBackendOptions(backend, mapPrefix) })],
    })
      .setLogger(new CapturingLogger())
      .compile();
    await app.init();
    tasks = app.get(TaskService);
  }, 60_000);

  afterAll(() => app?.close());

  it('checks every input first: a bad one is named by its place and field, and nothing is submitted', async () => {
    const inputs: SubmitInput[] = [
      { type: 'mail', name: 'checked-1' },
      { type: 'mail', name: 'checked-2', priority: 1.5 },
      { type: 'mail', name: 'checked-3' },
    ];
    const error = await tasks.submitMany(inputs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ field: 'inputs[1].priority', kind: 'task', id: 'mail:checked-2' });
    expect((error as Error).message).toBe('submitMany: inputs[1].priority: Task "mail:checked-2": invalid priority: must be a whole number, got 1.5');
    await expect(tasks.submitMany([{ type: 'mail', name: 'checked-4' }, 'mail' as unknown as SubmitInput])).rejects.toMatchObject({ field: 'inputs[1]' });
    await expect(tasks.submitMany({ type: 'mail', name: 'checked-5' } as unknown as SubmitInput[])).rejects.toMatchObject({ field: 'inputs' });
    // Nothing of those calls was written, not even the inputs before the bad one.
    expect(await tasks.list({ types: ['mail'] })).toEqual([]);
  });

  it('makes one task of an id given twice in one call, and answers it for both', async () => {
    const [first, second] = await tasks.submitMany([{ type: 'twice', name: 'same', data: 1 }, { type: 'twice', name: 'same', data: 2 }]);
    expect(second).toEqual(first);
    expect(await tasks.list({ types: ['twice'] })).toEqual([first]);
  });

  it('submits hundreds in the order given, keeps an id that exists, and on Redis sends them together', async () => {
    const existing = await tasks.submit({ type: 'bulk', name: 'n-7', data: { first: true } });
    const inputs: SubmitInput[] = Array.from({ length: 600 }, (_, i) => ({ type: 'bulk', name: `n-${i}`, data: { i } }));
    const sent = Redis.prototype.sendCommand;
    let scripts = 0;
    Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof sent>) {
      if (/^evalsha$/i.test(args[0]?.name ?? '')) scripts++;
      return sent.apply(this, args);
    };
    let submitted;
    try {
      submitted = await tasks.submitMany(inputs);
    } finally {
      Redis.prototype.sendCommand = sent;
    }
    expect(submitted.map((t) => t.id)).toEqual(inputs.map((input) => `bulk:${input.name}`));
    expect(submitted[7]).toEqual(existing);
    expect(submitted.filter((t) => t.state === 'pending' && t.epoch === 0)).toHaveLength(600);
    expect(new Set(submitted.map((t) => t.seq)).size).toBe(600);
    expect((await tasks.list({ types: ['bulk'] }, 1_000)).length).toBe(600);
    // 600 submits, at most 256 a script call: 3 calls, and a few of the node's own meanwhile (not one per task).
    if (backend === 'redis') expect(scripts).toBeLessThanOrEqual(12);
  });
});
