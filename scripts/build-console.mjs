// Builds the web console (lib/console, a browser app) into dist/console: its TypeScript bundled by esbuild into one
// script for the browser, next to its page and styles. The controller serves them from there (npm run build runs
// this after tsc; jest's global setup runs it too, so the tests serve the console of the sources under test).
// The type check is tsc's (lib/console/tsconfig.json, in npm run typecheck and npm run build): esbuild only strips.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = join(ROOT, 'lib/console');
const OUT = join(ROOT, 'dist/console');

/** Writes dist/console/console.client.js, console.html and console.css. */
export async function buildConsole() {
  mkdirSync(OUT, { recursive: true });
  await build({
    entryPoints: [join(SOURCE, 'console.main.ts')],
    outfile: join(OUT, 'console.client.js'),
    bundle: true,
    // The browser, never Node: an import of a Node module (even through lib/) fails the build instead of shipping.
    platform: 'browser',
    format: 'iife',
    target: ['es2022'],
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  for (const file of ['console.html', 'console.css']) copyFileSync(join(SOURCE, file), join(OUT, file));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole();
