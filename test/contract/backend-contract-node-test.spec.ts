import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');

describe('the public contract suite under node:test', () => {
  it('runs every case of every suite from the built package and passes on the memory backend', async () => {
    // npm test builds before jest runs; alone, run `npm run build` first.
    expect(existsSync(join(ROOT, 'dist', 'testing.js'))).toBe(true);
    const { stdout } = await promisify(execFile)(process.execPath, ['--test', '--test-reporter=tap', join(ROOT, 'test/fixtures/node-test/memory-backend.contract.mjs')], { cwd: ROOT });
    expect(stdout).toMatch(/# fail 0/);
    // The primitives' suite and each capability's, all under the one call.
    for (const suite of [
      'StoreBackend contract: memory under node:test',
      'PermitStore contract: PermitRecordStore on memory under node:test',
      'PresenceStore contract: PresenceRecordStore on memory under node:test',
      'HistoryStore contract: HistoryRecordStore on memory under node:test',
      'ScheduleStore contract: ScheduleRecordStore on memory under node:test',
      'TaskStore contract: TaskRecordStore on memory under node:test',
      'TaskStore contract, claim order over a backlog: TaskRecordStore on memory under node:test',
    ]) expect(stdout).toContain(suite);
    const passed = Number(/# pass (\d+)/.exec(stdout)?.[1]);
    expect(passed).toBeGreaterThanOrEqual(62);
  });
});
