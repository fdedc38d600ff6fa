import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The PostgreSQL server of the test run: the one `test/setup/global-setup.mjs` started (`scripts/postgres.mjs`), or
 * the one GATEKEEPER_PG_URL names.
 */
export function testPostgresUrl(): string {
  const url = process.env.GATEKEEPER_PG_URL;
  if (!url) throw new Error('GATEKEEPER_PG_URL is not set: run the tests through jest (its global setup starts a server) or point it at one');
  return url;
}

/**
 * The path of one of PostgreSQL's programs (`pg_dump`, `pg_restore`), from the folder `scripts/postgres.mjs` starts
 * servers from: beside `initdb` on the PATH (through a link), else Debian's newest under /usr/lib/postgresql.
 */
export function postgresTool(tool: string): string {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return join(dirname(realpathSync(onPath)), tool);
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', tool))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error(`PostgreSQL's ${tool} not found: install PostgreSQL's server package`);
  return join(root, versions[0], 'bin', tool);
}
