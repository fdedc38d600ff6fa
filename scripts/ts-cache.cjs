/*
 * The transpile cache behind scripts/ts-register.cjs (see there): TypeScript's transpileModule with tsconfig.json's
 * options, kept in .cache/ts-register/ under the hash of the source it was made from.
 */
'use strict';
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

const ROOT = resolve(__dirname, '..');
const CACHE_DIR = join(ROOT, '.cache', 'ts-register');
const SALT = createHash('sha256')
  .update(readFileSync(require.resolve('typescript/package.json')))
  .update(readFileSync(join(ROOT, 'tsconfig.json')))
  .update(readFileSync(__filename))
  .update(readFileSync(join(__dirname, 'ts-register.cjs')))
  .digest('hex');

let compiler;
/** TypeScript and tsconfig.json's compiler options, loaded on the first file not in the cache. */
function loadCompiler() {
  if (compiler) return compiler;
  const ts = require('typescript');
  const configFile = join(ROOT, 'tsconfig.json');
  const { config, error } = ts.readConfigFile(configFile, ts.sys.readFile);
  if (error) throw new Error(`ts-register: cannot read ${configFile}: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, ROOT, configFile);
  // As ts-node's transpile-only mode: no declarations, and a source map (inlined below) so stack traces name .ts lines.
  Object.assign(options, { declaration: false, declarationMap: false, noEmit: false, sourceMap: true, inlineSourceMap: false, inlineSources: false });
  compiler = { ts, options };
  return compiler;
}

function sourceHash(filename, source) {
  return createHash('sha256').update(SALT).update(filename).update('\0').update(source).digest('hex');
}

function entryFile(filename) {
  return join(CACHE_DIR, `${createHash('sha256').update(filename).digest('hex').slice(0, 32)}.js`);
}

/** The JavaScript for `filename`: from the cache when it was made from this very source, else transpiled and kept. */
function transpiled(filename) {
  const source = readFileSync(filename, 'utf8');
  const header = `//ts-register ${sourceHash(filename, source)}\n`;
  const entry = entryFile(filename);
  try {
    const cached = readFileSync(entry, 'utf8');
    if (cached.startsWith(header)) return cached.slice(header.length);
  } catch {
    // Not cached yet.
  }
  const { ts, options } = loadCompiler();
  const { outputText, sourceMapText, diagnostics } = ts.transpileModule(source, { fileName: filename, compilerOptions: options, reportDiagnostics: true });
  if (diagnostics?.length) {
    const text = diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n');
    throw new Error(`ts-register: cannot transpile ${filename}: ${text}`);
  }
  // The map names the source by its absolute path (transpileModule names it relative to nothing).
  const map = { ...JSON.parse(sourceMapText), file: filename, sources: [filename] };
  delete map.sourceRoot;
  const code = outputText.replace(/\n\/\/# sourceMappingURL=.*$/, '') +
    `\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
  mkdirSync(CACHE_DIR, { recursive: true });
  const temporary = `${entry}.${process.pid}.tmp`;
  writeFileSync(temporary, header + code);
  renameSync(temporary, entry);
  return code;
}

/** Fills the cache for every .ts file under `dirs` (not specs), so processes started together all find it warm. */
function warm(dirs) {
  let files = 0;
  const visit = (dir) => {
    for (const item of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, item.name);
      if (item.isDirectory()) {
        if (item.name !== 'node_modules') visit(path);
      } else if (item.name.endsWith('.ts') && !item.name.endsWith('.d.ts') && !item.name.endsWith('.spec.ts')) {
        transpiled(path);
        files += 1;
      }
    }
  };
  for (const dir of dirs) visit(resolve(ROOT, dir));
  return files;
}

module.exports = { transpiled, warm, CACHE_DIR };
