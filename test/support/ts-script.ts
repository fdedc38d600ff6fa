import { join } from 'node:path';

/** Preloaded into every process that runs the repository's TypeScript (fixtures, harness nodes, bench nodes). */
export const TS_REGISTER = join(__dirname, '../../scripts/ts-register.cjs');

/** Node's arguments to run `script` (TypeScript) as a process of its own, transpiled through the shared cache. */
export function tsScriptArgs(script: string): string[] {
  return ['-r', TS_REGISTER, script];
}
