import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every ```ts block in the README follows an `<!-- example: path -->` marker and is that whole file, imports
 * included, which `npm run typecheck` compiles. So README code is complete and cannot drift from code that builds.
 * (The guide's pages under docs/ keep the same rule: docs-examples.spec.ts.)
 */
describe('README examples', () => {
  const root = join(__dirname, '../..');
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\s*```ts\n([\s\S]*?)```/g)];

  it('shows the quickstart as checked examples', () => {
    expect(blocks.map((m) => m[1])).toEqual(expect.arrayContaining(['examples/quickstart/app.module.ts', 'examples/quickstart/billing.jobs.ts']));
  });

  it.each(blocks.map((m) => [m[1], m[2]]))('%s is the README block, whole', (file, code) => {
    expect(code).toBe(readFileSync(join(root, file), 'utf8'));
  });

  it('installs and exports what the quickstart\'s store needs, and packs with one build', () => {
    // The quickstart is on PostgreSQL: the install line brings pg, the shell block names the database.
    expect(readFileSync(join(root, 'examples/quickstart/app.module.ts'), 'utf8')).toContain("backend: 'postgres',");
    expect(readme).toMatch(/\nnpm install --ignore-scripts && npm pack .*\ncd \.\.\/your-app && npm install \S+\.tgz @nestjs\/schedule pg\n/);
    expect(readme).toMatch(/\nexport GATEKEEPER_PG_URL=postgres:\/\/\S+\n/);
  });

  it('has no unchecked ts blocks', () => {
    const all = [...readme.matchAll(/```ts\n/g)].length;
    expect(all).toBe(blocks.length);
  });
});
