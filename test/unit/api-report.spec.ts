import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Extractor, ExtractorConfig, type ExtractorMessage } from '@microsoft/api-extractor';

// The public surface of each entry, as api-extractor reads it from the build (`npm test` builds before jest runs),
// must equal its report checked in under etc/: an export added, removed or changed fails here until the report is
// updated on purpose (`npm run api:update`, then review the diff). A public signature that names a type its entry
// does not export (ae-forgotten-export) fails too, and so does any api-extractor or TSDoc warning.
const ROOT = join(__dirname, '..', '..');
const ENTRIES = [
  { config: 'api-extractor.json', report: 'nestjs-gatekeeper.api.md' },
  { config: 'api-extractor.testing.json', report: 'nestjs-gatekeeper-testing.api.md' },
  { config: 'api-extractor.fencing.json', report: 'nestjs-gatekeeper-fencing.api.md' },
];

/** The lines one report has and the other lacks, `-` for the checked-in one and `+` for the build's. */
function differences(expected: string, actual: string): string[] {
  const before = expected.split('\n');
  const after = actual.split('\n');
  return [
    ...before.filter((line) => !after.includes(line)).map((line) => `- ${line}`),
    ...after.filter((line) => !before.includes(line)).map((line) => `+ ${line}`),
  ];
}

describe('the public API reports', () => {
  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist', 'index.d.ts'))) throw new Error('dist/ is not built: run `npm run build` first (`npm test` does)');
  });

  it.each(ENTRIES)('$report matches what the build exports, with no forgotten export and no warning', ({ config, report }) => {
    const messages: string[] = [];
    const result = Extractor.invoke(ExtractorConfig.loadFileAndPrepare(join(ROOT, config)), {
      localBuild: false,
      messageCallback: (message: ExtractorMessage) => {
        if (message.logLevel === 'error' || message.logLevel === 'warning') messages.push(message.formatMessageWithLocation(ROOT));
        message.handled = true;
      },
    });
    const changed = result.apiReportChanged
      ? differences(readFileSync(join(ROOT, 'etc', report), 'utf8'), readFileSync(join(ROOT, 'temp', 'api', report), 'utf8'))
      : [];
    // On a failure: if the change is meant, run `npm run api:update` and commit etc/ with it.
    expect({ messages, changed }).toEqual({ messages: [], changed: [] });
    expect(result.succeeded).toBe(true);
  });

  it.each(ENTRIES)('$report has TSDoc on every public symbol', ({ report }) => {
    // api-extractor marks a declaration with no doc comment `// (undocumented)` on the line before it.
    const lines = readFileSync(join(ROOT, 'etc', report), 'utf8').split('\n');
    const undocumented = lines.flatMap((line, i) => (line.includes('(undocumented)') ? [lines[i + 1].trim()] : []));
    expect(undocumented).toEqual([]);
  });

});
