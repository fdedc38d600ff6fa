import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

// What `npm publish` would upload, read from `npm pack --dry-run` on the built dist/ (`npm test` builds before
// jest runs). --ignore-scripts: prepack and prepare would clean and rebuild dist/ under the other tests' feet.
const ROOT = join(__dirname, '..', '..');
const DIST = join(ROOT, 'dist');

function packedFiles(): string[] {
  const stdout = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [{ files }] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  return files.map((f) => f.path);
}

function declarationFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarationFiles(path);
    return entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('the published package', () => {
  beforeAll(() => {
    if (!existsSync(join(DIST, 'index.js'))) throw new Error('dist/ is not built: run `npm run build` first (`npm test` does)');
  });

  it('packs the licence, changelog, readme, entry points, types and CLI, and nothing of the tests or tools', () => {
    const files = packedFiles();
    expect(files).toEqual(expect.arrayContaining([
      'package.json', 'LICENSE', 'CHANGELOG.md', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/testing.js', 'dist/testing.d.ts', 'dist/fencing.js', 'dist/fencing.d.ts',
      'dist/cli/gatekeeper.cli.js', 'dist/console/console.html', 'dist/console/console.css', 'dist/console/console.client.js',
    ]));
    const outside = files.filter((f) => !f.startsWith('dist/') && !['package.json', 'LICENSE', 'CHANGELOG.md', 'README.md'].includes(f));
    expect(outside).toEqual([]);
    expect(files.filter((f) => /(^|\/)(test|tests|__tests__|harness|fixtures)\//.test(f) || /\.(spec|test)\.(js|d\.ts|js\.map)$/.test(f))).toEqual([]);
  });

  it('says where it comes from and under which licence', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.license).toBe('MIT');
    expect(pkg).toEqual(expect.objectContaining({
      repository: expect.objectContaining({ url: expect.stringMatching(/^git\+https:\/\//) }),
      homepage: expect.stringMatching(/^https:\/\//),
      bugs: expect.objectContaining({ url: expect.stringMatching(/^https:\/\//) }),
    }));
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
  });

  it('runs no install script from a tarball: npm 11 flags only its prepare, which it never runs for one (Getting started, Install)', () => {
    type Manifest = { name: string; version: string; scripts?: Record<string, string>; dependencies?: Record<string, string>; gypfile?: boolean };
    const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Manifest;
    const pkg = read(join(ROOT, 'package.json'));
    // preinstall/install/postinstall run wherever the package comes from (and a binding.gyp implies install); the
    // guide's Install (docs/getting-started.md) says a tarball install runs none, so none may appear, here or in a
    // runtime dependency.
    const installScripts = (m: Manifest, dir: string) => [
      ...['preinstall', 'install', 'postinstall'].filter((s) => m.scripts?.[s] !== undefined),
      ...(m.gypfile || existsSync(join(dir, 'binding.gyp')) ? ['binding.gyp'] : []),
    ].map((s) => `${m.name}: ${s}`);
    expect(installScripts(pkg, ROOT)).toEqual([]);
    for (const dependency of Object.keys(pkg.dependencies ?? {})) {
      const dir = join(ROOT, 'node_modules', dependency);
      expect(installScripts(read(join(dir, 'package.json')), dir)).toEqual([]);
    }
    // The line npm prints, as the guide's Install quotes it.
    expect(readFileSync(join(ROOT, 'docs', 'getting-started.md'), 'utf8')).toContain(`\`${pkg.name}@${pkg.version} (prepare: ${pkg.scripts?.prepare})\``);
  });

  it('leaves members marked @internal out of the type declarations', () => {
    const files = declarationFiles(DIST);
    expect(files.length).toBeGreaterThan(0);
    const leaking = files.filter((file) => readFileSync(file, 'utf8').includes('@internal')).map((file) => relative(ROOT, file));
    expect(leaking).toEqual([]);
  });
});
