import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { eventually } from './eventually';
import { tsScriptArgs } from './ts-script';

/** A fixture app (TypeScript, run through scripts/ts-register.cjs) as a real process, with its output kept. */
export interface AppProcess {
  name: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts `script` as node `name` and waits until it prints READY. */
export async function startApp(script: string, name: string, env: NodeJS.ProcessEnv): Promise<AppProcess> {
  const child = spawn(process.execPath, tsScriptArgs(script), {
    env: { ...process.env, ...env, NODE_NAME: name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c) => (output += String(c)));
  child.stderr?.on('data', (c) => (output += String(c)));
  const app = {
    name,
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
  await eventually(`${name} to start (${output})`, () => {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${output}`);
    return output.includes('READY');
  }, { timeoutMs: Number(process.env.APP_START_TIMEOUT_MS ?? 30_000), intervalMs: 100 });
  return app;
}

/** The JSON lines of a ledger file, in the order they were appended. */
export function readLedger<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as T);
}
