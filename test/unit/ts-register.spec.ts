import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TS_REGISTER } from '../support/ts-script';

// The preload every fixture, harness and sample process runs its TypeScript through (scripts/ts-register.cjs):
// what it runs must be the source as it is now, with the decorator metadata Nest's injection reads.
const DIR = join(__dirname, '../../.cache/ts-register-spec');
const SCRIPT = join(DIR, 'app.ts');

function source(version: number): string {
  return `import 'reflect-metadata';
class Dep {}
const Injectable = (): ClassDecorator => () => undefined;
@Injectable()
class Service {
  constructor(readonly dep: Dep) {}
}
const params = (Reflect.getMetadata('design:paramtypes', Service) as Array<{ name: string }>).map((t) => t.name);
if (process.argv[2] === 'throw') throw new Error('thrown on line 9');
console.log(JSON.stringify({ version: ${version}, params }));
`;
}

function run(...args: string[]): string {
  return execFileSync(process.execPath, ['-r', TS_REGISTER, SCRIPT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('the TypeScript preload of real processes', () => {
  beforeAll(() => mkdirSync(DIR, { recursive: true }));

  it('runs a file as it is now: an edit after a run (and its cache entry) is what the next run executes', () => {
    const first = Date.now();
    writeFileSync(SCRIPT, source(first));
    expect(JSON.parse(run())).toEqual({ version: first, params: ['Dep'] });
    expect(JSON.parse(run())).toEqual({ version: first, params: ['Dep'] });
    writeFileSync(SCRIPT, source(first + 1));
    expect(JSON.parse(run())).toEqual({ version: first + 1, params: ['Dep'] });
  });

  it('names the TypeScript file and line in a stack trace', () => {
    writeFileSync(SCRIPT, source(1));
    let stderr = '';
    try {
      run('throw');
    } catch (error) {
      stderr = String((error as { stderr: string }).stderr);
    }
    expect(stderr).toContain('thrown on line 9');
    expect(stderr).toContain(`${SCRIPT}:9`);
  });
});
