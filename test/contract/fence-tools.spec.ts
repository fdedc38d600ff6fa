import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshDatabase } from '../support/fresh-database';
import { tsScriptArgs } from '../support/ts-script';

const run = promisify(execFile);
const SCRIPT = join(__dirname, '../fixtures/fence-tool.process.ts');

const TOOLS: ReadonlyArray<readonly [tool: string, dialect: 'postgres' | 'mysql']> = [
  ['pg', 'postgres'], ['typeorm', 'postgres'], ['knex', 'postgres'], ['kysely', 'postgres'], ['drizzle', 'postgres'], ['mikro-orm', 'postgres'], ['prisma', 'postgres'],
  ['mysql2', 'mysql'], ['typeorm', 'mysql'], ['knex', 'mysql'], ['kysely', 'mysql'], ['drizzle', 'mysql'], ['mikro-orm', 'mysql'], ['prisma', 'mysql'],
];

/*
 * fence() through each tool's executor, on the test run's real PostgreSQL and MariaDB, each tool with its real
 * library in a process of its own (test/fixtures/fence-tool.process.ts): a fenced transaction commits with the user's
 * write; a stale token is refused with StaleFencingTokenError and the user's writes in that transaction roll back,
 * also when the caller catches the refusal and commits; savepoints as each tool makes them (on MySQL a refusal in one
 * rolls back the whole transaction); a missing fence table is one clear error. On PostgreSQL, the library's own writes
 * in the tool's transaction too (what a task's `completeIn` and a run's `completeRunIn` write through).
 */
describe('fence() through each tool, on a real database', () => {
  it.each(TOOLS)('%s on %s: commits with the write, refuses a stale token and rolls the transaction back, caught or not, in savepoints too', async (tool, dialect) => {
    const url = await freshDatabase(dialect, `fence_${tool.replace('-', '_')}_${randomUUID().slice(0, 8)}`);
    const { stdout } = await run(process.execPath, tsScriptArgs(SCRIPT), { env: { ...process.env, TOOL: tool, DIALECT: dialect, DATABASE_URL: url }, timeout: 60_000 });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(seen.accepted).toBe(5);
    expect(seen.afterCommit).toEqual({ notes: ['first', 'same-token'], token: 5 });
    expect(seen.refused).toMatchObject({ name: 'StaleFencingTokenError', resource: 'ledger', token: 4, newer: 5 });
    expect(seen.afterRefusal).toEqual({ notes: ['first', 'same-token'], token: 5 });
    // Caught and committed anyway: nothing of the transaction lands, and a write after the refusal fails.
    expect(seen.swallowed).toBeNull();
    expect(seen.afterSwallowed).toEqual({ notes: ['first', 'same-token'], token: 5 });
    expect(seen.writeAfterSwallowed).not.toBeNull();
    if (dialect === 'postgres' && tool !== 'mikro-orm') {
      // Left idle past maxIdle: the server ended it, the tool said so, nothing of it landed.
      expect(seen.idleEnded).not.toBeNull();
      expect(seen.afterIdle).toEqual({ notes: ['first', 'same-token', 'outer', 'inner-newer'], token: null });
    }
    if (dialect === 'postgres') {
      expect(seen.nested).toMatchObject({ name: 'StaleFencingTokenError', token: 3, newer: 5 });
      expect(seen.afterNested).toEqual({ notes: ['first', 'same-token', 'outer', 'inner-newer'], token: 6 });
    } else {
      // MySQL: the refusal in the savepoint rolled the whole transaction back (the tool may then report its savepoint
      // gone rather than the refusal); the outer's write is gone, what it wrote after failed.
      expect(seen.nested).not.toBeNull();
      expect(seen.nestedOuter).not.toBeNull();
      expect(seen.afterNested).toEqual({ notes: ['first', 'same-token', 'newer'], token: 6 });
    }
    if (dialect === 'postgres') {
      // The library's writes in the tool's transaction (a completion, a run's record, a submit): they bind each value
      // once and in order, land or not by their compare, commit with it and roll back with it.
      expect(seen.records).toEqual({
        created: true, read: 'one', replaced: true, stale: false, beforeCommit: null, committed: 'two',
        rolledBack: 'roll back', afterRollback: ['two', null],
      });
    }
    expect(seen.missing.name).toBe('FenceTableMissingError');
    expect(seen.missing.message).toContain(`npx nestjs-gatekeeper fencing sql --dialect ${dialect} --table no_such_fences`);
  }, 90_000);
});
