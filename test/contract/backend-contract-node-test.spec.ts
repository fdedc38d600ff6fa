import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');

describe('the backend contract suite under node:test', () => {
  it('runs every case from the built package and passes on the memory backend', async () => {
    // npm test builds before jest runs; alone, run `npm run build` first.
    expect(existsSync(join(ROOT, 'dist', 'testing.js'))).toBe(true);
    const { stdout } = await promisify(execFile)(process.execPath, ['--test', '--test-reporter=tap', join(ROOT, 'test/fixtures/node-test/memory-backend.contract.mjs')], { cwd: ROOT });
    expect(stdout).toMatch(/# fail 0/);
    const passed = Number(/# pass (\d+)/.exec(stdout)?.[1]);
    expect(passed).toBeGreaterThanOrEqual(12);
  });
});
