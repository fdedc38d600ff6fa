import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tsScriptArgs } from '../support/ts-script';

const run = promisify(execFile);
const BLOCK = join(__dirname, '../fixtures/without-hazelcast-client.cjs');

/** hazelcast-client is needed only by applications with a capability on Hazelcast: the others never load it. */
describe('an application without hazelcast-client installed', () => {
  it('runs permits, tasks and schedules on the memory backend', async () => {
    const { stdout } = await run(process.execPath, ['-r', BLOCK, ...tsScriptArgs(join(__dirname, '../fixtures/memory-only.process.ts'))], { timeout: 60_000 });
    const result = JSON.parse(/RESULT (.*)/.exec(stdout)![1]) as Record<string, unknown>;
    expect(result).toEqual({ granted: true, task: expect.any(String), schedule: 'created' });
  });

  it('is really without it (the preload refuses the package)', async () => {
    const script = "try { require('hazelcast-client'); console.log('loaded') } catch (e) { console.log(e.code) }";
    const { stdout } = await run(process.execPath, ['-r', BLOCK, '-e', script]);
    expect(stdout.trim()).toBe('MODULE_NOT_FOUND');
  });
});
