import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The built CLI (npm test builds it first). */
export const CLI_BIN = join(__dirname, '../../dist/cli/gatekeeper.cli.js');

/**
 * Runs the built binary as a user would; `ms` is how long it ran. The test run's environment names all three stores
 * (the global setup's), so the CLI is on Hazelcast unless `env` says otherwise; a variable `env` gives as `undefined`
 * is left out.
 */
export function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const merged: NodeJS.ProcessEnv = { ...process.env, GATEKEEPER_BACKEND: 'hazelcast', ...env };
    for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env: merged });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    child.stderr.on('data', (c) => (stderr += String(c)));
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}
