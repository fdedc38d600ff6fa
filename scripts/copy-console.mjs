// Copies the web console's files (HTML, CSS, browser JS) next to the compiled controller: tsc copies only .ts output.
import { cpSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
cpSync(join(ROOT, 'lib/nest/admin/console'), join(ROOT, 'dist/nest/admin/console'), { recursive: true });
