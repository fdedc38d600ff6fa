import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The examples are meant to be combined (a team takes the quickstart, then the fenced-writes job, then the report
 * jobs): no two of them may share a semaphore by accident. Each semaphore a `@ClusterSingleton` names is named by one
 * method only, and every module definition of a name in any example gives it the same duration.
 */
describe('the examples combine', () => {
  const root = join(__dirname, '../../examples');
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  const sources = files(root).map((file) => ({ file: relative(root, file), text: readFileSync(file, 'utf8') }));

  it('names each @ClusterSingleton semaphore in one method only', () => {
    const users = new Map<string, string[]>();
    for (const { file, text } of sources) {
      for (const m of text.matchAll(/@ClusterSingleton\(\s*(?:'([^']+)'|\{\s*semaphore:\s*'([^']+)')/g)) {
        const name = m[1] ?? m[2];
        users.set(name, [...(users.get(name) ?? []), file]);
      }
    }
    expect(users.size).toBeGreaterThanOrEqual(5);
    expect([...users].filter(([, where]) => where.length > 1)).toEqual([]);
  });

  it('takes a permit by hand (withPermit, acquire, tryAcquire) on a semaphore no job and no other file uses', () => {
    const jobs = new Set(sources.flatMap(({ text }) => [...text.matchAll(/@ClusterSingleton\(\s*(?:'([^']+)'|\{\s*semaphore:\s*'([^']+)')/g)].map((m) => m[1] ?? m[2])));
    const byHand = new Map<string, string[]>();
    // The apps' code, not an example's own test of a store (which takes billing's permit to show the store works).
    for (const { file, text } of sources.filter((s) => !/spec/.test(s.file))) {
      for (const m of text.matchAll(/(?:withPermit|tryAcquire|\.acquire)\(\s*'([^']+)'/g)) byHand.set(m[1], [...(byHand.get(m[1]) ?? []), file]);
    }
    expect([...byHand.keys()].sort()).toEqual(['migration', 'reindex']);
    expect([...byHand].filter(([name, where]) => jobs.has(name) || new Set(where).size > 1)).toEqual([]);
  });

  it('gives a semaphore the same duration in every module definition of it', () => {
    const durations = new Map<string, Set<string>>();
    for (const { text } of sources) {
      for (const m of text.matchAll(/\{\s*name:\s*'([^']+)'[^}]*?duration:\s*'([^']+)'/g)) {
        durations.set(m[1], new Set([...(durations.get(m[1]) ?? []), m[2]]));
      }
    }
    expect(durations.get('billing')).toEqual(new Set(['1m']));
    expect([...durations].filter(([, each]) => each.size > 1)).toEqual([]);
  });
});
