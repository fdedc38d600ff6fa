import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_BIN } from '../support/cli-process';

/** The built CLI's output read by a reader that stops early (`nestjs-gatekeeper --help | head -1`), as a shell runs it. */
describe('the CLI piped into a reader that stops early', () => {
  it('ends quietly: no EPIPE stack, exit 0', () => {
    const errors = join(mkdtempSync(join(tmpdir(), 'gatekeeper-cli-pipe-')), 'stderr');
    // PIPESTATUS[0]: the CLI's own exit code in the pipeline.
    const run = spawnSync('bash', ['-c', `"${process.execPath}" "${CLI_BIN}" --help 2>"${errors}" | head -n 1 >/dev/null; echo "\${PIPESTATUS[0]}"`], { encoding: 'utf8' });
    expect({ exit: run.stdout.trim(), stderr: readFileSync(errors, 'utf8') }).toEqual({ exit: '0', stderr: '' });
  });
});
