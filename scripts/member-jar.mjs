#!/usr/bin/env node
// Builds the library's optional member-side jar (member/src: compare-and-set of many task records in one call) with
// the JDK's javac against the Hazelcast member jar, for members that the tests, the benchmark and the sample start,
// and for the npm package.
//
//   node scripts/member-jar.mjs build [--out member/gatekeeper-member.jar]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, copyFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureJar } from './hazelcast.mjs';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = join(REPO_ROOT, 'member', 'src');
const JDK_BIN = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin') : '';

const builds = new Map(); // jar path -> in-flight build

async function javaSources(dir) {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? javaSources(join(dir, e.name)) : e.name.endsWith('.java') ? [join(dir, e.name)] : [])));
  return nested.flat().sort();
}

/**
 * Returns the path of the member jar built from the current sources, compiling it into `.cache/hazelcast/` (named by
 * a hash of the sources) when it is not there yet. Safe to call concurrently: built under a temporary name and renamed.
 * @returns {Promise<string>}
 */
export async function ensureMemberJar({ cacheDir = join(REPO_ROOT, '.cache', 'hazelcast') } = {}) {
  const files = await javaSources(SOURCES);
  const hash = createHash('sha256');
  for (const file of files) hash.update(file.slice(SOURCES.length)).update(await readFile(file));
  const jarPath = join(cacheDir, `gatekeeper-member-${hash.digest('hex').slice(0, 12)}.jar`);
  if (await stat(jarPath).then(() => true, () => false)) return jarPath;
  if (!builds.has(jarPath)) builds.set(jarPath, build(files, cacheDir, jarPath).finally(() => builds.delete(jarPath)));
  return builds.get(jarPath);
}

async function run(tool, args) {
  const child = spawn(join(JDK_BIN, tool), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const code = await once(child, 'close').then(([c]) => c, (err) => { output += err.message; return err.code; });
  if (code !== 0) throw new Error(`Could not build the gatekeeper member jar: "${tool} ${args.join(' ')}" failed (${code}); is a JDK (11 or later) installed?\n${output}`);
}

async function build(files, cacheDir, jarPath) {
  const hazelcastJar = await ensureJar({ cacheDir });
  await mkdir(cacheDir, { recursive: true });
  const tmp = await mkdtemp(join(cacheDir, '.member-'));
  try {
    const classes = join(tmp, 'classes');
    // Release 11: the oldest JDK Hazelcast 5 members run on.
    await run('javac', ['--release', '11', '-nowarn', '-cp', hazelcastJar, '-d', classes, ...files]);
    await run('jar', ['cf', join(tmp, 'member.jar'), '-C', classes, '.']);
    await rename(join(tmp, 'member.jar'), jarPath);
    return jarPath;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' } } });
  if (positionals[0] !== 'build') {
    console.error('usage: node scripts/member-jar.mjs build [--out <path>]');
    process.exit(2);
  }
  const jar = await ensureMemberJar();
  if (values.out) {
    await mkdir(dirname(resolve(values.out)), { recursive: true });
    await copyFile(jar, resolve(values.out));
  }
  console.log(values.out ? resolve(values.out) : jar);
}
