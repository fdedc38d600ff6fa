import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * A throwaway server run by one of the project's scripts (`scripts/postgres.mjs start`, `scripts/mariadb.mjs start`)
 * as a child of the bench, with `args` after `start`: its URL once the script prints `banner` with it, and a stop that ends the script (which
 * stops the server and deletes its data).
 */
export async function serverFromScript(script: string, banner: RegExp, args: readonly string[] = []): Promise<{ url: string; child: ChildProcess; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(__dirname, '../scripts', script), 'start', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = banner.exec(line);
      if (match) resolve(match[1]);
    });
    void exited.then(([code]) => reject(new Error(`scripts/${script} start exited (code ${code}) before the server ran`)));
  });
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
