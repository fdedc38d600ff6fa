import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * `app.enableShutdownHooks()` without arguments traps every signal Nest knows, SIGSEGV, SIGBUS and SIGILL among them:
 * a replica that really crashes then runs a JavaScript handler instead of dying, and was seen spinning at 85 % CPU
 * with its transaction open. What a team copies (the README, the docs, the examples, the sample app) names the two
 * signals a stop sends, and nothing fatal.
 */
describe('the shutdown hooks a team copies', () => {
  const repo = join(__dirname, '../..');
  const walk = (dir: string, ends: string[]): string[] => readdirSync(join(repo, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name), ends) : ends.some((end) => e.name.endsWith(end)) ? [join(dir, e.name)] : []);
  const files = ['README.md', ...walk('docs', ['.md']), ...walk('examples', ['.ts']), ...walk('sample-app/src', ['.ts'])];

  it('name SIGTERM and SIGINT, and no signal of a crash', () => {
    const calls = files.flatMap((file) => [...readFileSync(join(repo, file), 'utf8').matchAll(/enableShutdownHooks\(([^)]*)\)/g)]
      .map((m) => ({ file: relative(repo, join(repo, file)), args: m[1] })));
    expect(calls.length).toBeGreaterThanOrEqual(5);
    const wrong = calls.filter(({ args }) => !/'SIGTERM'/.test(args) || !/'SIGINT'/.test(args) || /SIGSEGV|SIGBUS|SIGILL|SIGFPE|SIGABRT|SIGTRAP/.test(args));
    expect(wrong).toEqual([]);
  });
});
