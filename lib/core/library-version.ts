import { readFileSync } from 'node:fs';
import { join } from 'node:path';

let cached: string | undefined;

/** This library's version, read once from its package.json (two levels above this file in `lib/` and in `dist/`). */
export function libraryVersion(): string {
  if (cached !== undefined) return cached;
  cached = 'unknown';
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'nestjs-gatekeeper' && typeof pkg.version === 'string') cached = pkg.version;
  } catch {
    // Not where it should be (bundled?): say so rather than fail.
  }
  return cached;
}
