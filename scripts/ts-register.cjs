/*
 * Runs the repository's TypeScript in a plain Node process (`node -r ./scripts/ts-register.cjs app.ts`): the test
 * fixtures and harness nodes, the bench's nodes and the sample app. It transpiles each file as ts-node's
 * transpile-only mode does (TypeScript's transpileModule with tsconfig.json's options: no type check), but keeps the
 * output in .cache/ts-register/, so a process whose files are unchanged never loads the compiler at all: booting
 * the compiler and transpiling the library was most of a fixture's start-up (about 2 s and 3 CPU-seconds each).
 *
 * An entry is used only when its first line carries the hash of the source it was made from (with the compiler's
 * version, tsconfig.json and this file), so an edited file is transpiled again and a stale entry is never run.
 * There is one entry per source file; writes go through a temporary file and a rename, so processes starting at
 * once never read half an entry.
 */
'use strict';
const { sep } = require('node:path');
const { transpiled } = require('./ts-cache.cjs');

const NODE_MODULES = `${sep}node_modules${sep}`;
const loadJs = require.extensions['.js'];

process.setSourceMapsEnabled(true);
require.extensions['.ts'] = function loadTs(module, filename) {
  // As ts-node: TypeScript inside node_modules is not the repository's to compile.
  if (filename.includes(NODE_MODULES)) return loadJs(module, filename);
  module._compile(transpiled(filename), filename);
};
