#!/usr/bin/env node
// Installs this library as a user would, from the tarball `npm pack` makes, into fresh Nest apps made of the
// README's quickstart (examples/quickstart/*.ts, on PostgreSQL), compiles them with tsc, and runs each against a real
// store: the billing job must log `charging as ...`, the package's CLI must describe it (`jobs describe`, with the
// token in GATEKEEPER_ADMIN_TOKEN, the store from the app's own variables and no address configured), and SIGTERM must
// stop the app cleanly, releasing its permit.
//
//   node scripts/packed-app-smoke.mjs                       # every app below
//   node scripts/packed-app-smoke.mjs --apps nest12-esm     # some of them
//   node scripts/packed-app-smoke.mjs --keep                # keep the temp dir (printed)
//
// Apps (one npm install per Nest major and store, shared by its apps):
//   nest12-esm   Nest 12 (ESM-only packages) in an ESM app, as `nest new` makes them in 12: "type": "module", tsc
//                `module: nodenext`; Node then needs `.js` on relative imports, so `./app.module` is rewritten to
//                `./app.module.js` (and reported). Our CommonJS package is loaded by Node's import of CommonJS, and
//                requires @nestjs/* through require(esm): the script checks both sides see one module instance.
//   nest12-cjs   Nest 12 in a CommonJS app (the quickstart as is), relying on require(esm) (Node >= 20.19).
//   nest11-cjs   Nest 11 in a CommonJS app, as `nest new` makes them in 11 (`module: nodenext`, no "type").
//                These three are the quickstart as is, on PostgreSQL, with `pg` installed and no other store's client.
//   nest11-redis the same on Redis: examples/quickstart-redis/app.module.ts (the only file that differs) and
//                `ioredis` installed, against a throwaway redis-server with its AOF (scripts/redis.mjs), its prefix
//                declared new first by the package's own `store init`, as the README and the guide say.
//   nest11-hz    the same on Hazelcast: examples/quickstart-hazelcast/app.module.ts and `hazelcast-client` 5.6 (5.7
//                needs Node >= 20.22), against a member started here on a free port and declared new (no recovery
//                wait), given to the app through GATEKEEPER_HZ_MEMBERS / GATEKEEPER_HZ_CLUSTER_NAME; --member-port /
//                --cluster-name pick its port and name.
//   lib-types    the package's .d.ts files checked (skipLibCheck off) in the Nest 12 ESM and CommonJS apps. The apps
//                without hazelcast-client compile with skipLibCheck on, as `nest new` sets it: the option types name
//                hazelcast-client's, so this check adds it, as docs/backends.md tells such apps to. nest11-hz and
//                first-day compile with skipLibCheck off from the start.
//   no-schedule  after the Nest 12 apps: @nestjs/schedule uninstalled, the library still loads, a decorated method
//                called by hand and withPermit run (memory store).
//   first-day    a team's first day. The quickstart with no PostgreSQL to reach fails with one error line, no stack.
//                The Hazelcast app with no member fails within its connect timeout with one error line and no client
//                log lines; on a member nobody declared new (as Docker or an operator starts one) its first billing
//                tick waits, said once at warn, until the package's `store init`, then it runs within seconds;
//                after that member restarts under it, it waits again and `store init` refuses.
// The PostgreSQL server is GATEKEEPER_PG_URL's when set (the apps use its schema `gatekeeper`), else a throwaway one
// from the machine's PostgreSQL binaries (scripts/postgres.mjs). Prints one summary line; on failure, the output of
// what failed.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { freePorts, startCluster } from './hazelcast.mjs';
import { postgresFromEnv, startPostgres } from './postgres.mjs';
import { startRedis } from './redis.mjs';
import { declareFreshCluster } from './fresh-cluster.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const QUICKSTART = join(ROOT, 'examples', 'quickstart');
const QUICKSTART_FILES = ['app.module.ts', 'billing.jobs.ts', 'main.ts'];
/** The Redis quickstart's module, in place of the PostgreSQL one. */
const QUICKSTART_REDIS_MODULE = join(ROOT, 'examples', 'quickstart-redis', 'app.module.ts');
/** The Hazelcast quickstart's module, in place of the PostgreSQL one. */
const QUICKSTART_HZ_MODULE = join(ROOT, 'examples', 'quickstart-hazelcast', 'app.module.ts');

/** What each Nest major's apps install besides the tarball (one install per major). */
const INSTALLS = {
  12: ['@nestjs/core@^12', '@nestjs/common@^12', '@nestjs/platform-express@^12', '@nestjs/schedule@^12',
    'reflect-metadata@^0.2', 'rxjs@^7', 'pg@^8', 'typescript@^7', '@types/node@^20'],
  // @nestjs/schedule unpinned: what `npm install @nestjs/schedule` gives a Nest 11 app (12.x, whose peers accept
  // Nest 11). The 6.x line with Nest 11 is the repository's own development set, tested by `npm test`.
  11: ['@nestjs/core@^11', '@nestjs/common@^11', '@nestjs/platform-express@^11', '@nestjs/schedule',
    'reflect-metadata@^0.2', 'rxjs@^7', 'pg@^8', 'typescript@^5', '@types/node@^20'],
};
// Each store's app installs its own client and no other (all optional peers; each backend's apps do without the
// others' clients): the Redis app `ioredis`, the Hazelcast app `hazelcast-client`.
INSTALLS['11-redis'] = [...INSTALLS[11].filter((p) => !p.startsWith('pg@')), 'ioredis@^5'];
INSTALLS['11-hz'] = [...INSTALLS[11].filter((p) => !p.startsWith('pg@')), 'hazelcast-client@~5.6.0'];
const APPS = {
  'nest12-esm': { major: 12, esm: true, store: 'postgres' },
  'nest12-cjs': { major: 12, esm: false, store: 'postgres' },
  'nest11-cjs': { major: 11, esm: false, store: 'postgres' },
  'nest11-redis': { major: '11-redis', esm: false, store: 'redis' },
  'nest11-hz': { major: '11-hz', esm: false, store: 'hazelcast' },
};
const CHECKS = ['lib-types', 'no-schedule', 'first-day'];

const TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'ES2023',
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    strict: true,
    skipLibCheck: false, // check the package's .d.ts files too
    types: ['node'],
    rootDir: 'src',
    outDir: 'dist',
  },
  include: ['src'],
};

const CHARGED = /charging as (\S+), fencing token (\d+)/;
const INSTALL_TIMEOUT_MS = 300_000;
const TSC_TIMEOUT_MS = 120_000;
/** The quickstart's admin API token (its `admin: {}` reads GATEKEEPER_ADMIN_TOKEN), which the CLI sends too. */
const ADMIN_TOKEN = 'packed-smoke-admin-token-0123456789';
const CHARGE_TIMEOUT_MS = 45_000; // start-up plus one 10 s tick, with room for a slow machine
const STOP_TIMEOUT_MS = 20_000;

class SmokeError extends Error {
  constructor(message, output) {
    super(output ? `${message}\n---- output ----\n${output.trimEnd()}\n---- end of output ----` : message);
  }
}

const children = new Set();
const log = (line) => console.log(`[packed-app-smoke] ${line}`);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Runs a command to its end and returns its stdout; rejects with all its output if it fails or outlasts `timeoutMs`. */
async function run(command, args, { cwd, env = cleanEnv(), timeoutMs, what = `${command} ${args.join(' ')}` }) {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  let stdout = '';
  child.stdout.on('data', (d) => { output += d; stdout += d; });
  child.stderr.on('data', (d) => { output += d; });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const [code, signal] = await once(child, 'close');
    if (code !== 0) {
      throw new SmokeError(`${what} (in ${cwd}) ${signal ? `was killed (${signal}; limit ${seconds(timeoutMs)})` : `failed (exit code ${code})`}`, output);
    }
    return stdout;
  } catch (error) {
    if (error instanceof SmokeError) throw error;
    throw new SmokeError(`${what} (in ${cwd}) could not run: ${error.message}`, output);
  } finally {
    clearTimeout(timer);
    children.delete(child);
  }
}

async function packageVersion(dir, name) {
  return JSON.parse(await readFile(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/** `npm pack` (its prepack script cleans dist/, prepare builds it): the tarball a publish would upload. */
async function pack(workDir) {
  const stdout = await run('npm', ['pack', '--json', '--pack-destination', workDir], { cwd: ROOT, timeoutMs: TSC_TIMEOUT_MS, what: 'npm pack' });
  const json = stdout.slice(stdout.search(/^\[/m)); // the scripts' own lines may come first
  const [{ filename, entryCount, files }] = JSON.parse(json);
  // The web console's files are built by scripts/build-console.mjs, not emitted by tsc: a missing one is a console that 500s.
  const shipped = new Set(files.map((f) => f.path));
  const missing = ['console.html', 'console.css', 'console.client.js'].map((f) => `dist/console/${f}`).filter((f) => !shipped.has(f));
  if (missing.length) throw new Error(`the tarball lacks the console's files: ${missing.join(', ')}`);
  return { tarball: join(workDir, filename), entryCount };
}

/** One fresh npm project per Nest major, the tarball and that major's packages installed into it. */
async function install(dir, major, tarball) {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ name: `smoke-nest${major}`, version: '0.0.0', private: true }, null, 2)}\n`);
  await run('npm', ['install', '--no-audit', '--no-fund', tarball, ...INSTALLS[major]],
    { cwd: dir, timeoutMs: INSTALL_TIMEOUT_MS, what: `npm install (Nest ${major})` });
  const versions = {};
  const clients = INSTALLS[major].filter((p) => /^(hazelcast-client|pg|ioredis)@/.test(p)).map((p) => p.slice(0, p.indexOf('@')));
  for (const name of ['@nestjs/core', '@nestjs/schedule', 'typescript', ...clients]) versions[name] = await packageVersion(dir, name);
  return versions;
}

/**
 * The quickstart files into `<dir>/src`, relative imports given `.js` for an ESM app; returns the rewrites made.
 * `backend` 'redis' or 'hazelcast' takes that quickstart's module in place of the PostgreSQL one. `libCheck` turns
 * skipLibCheck off.
 */
async function writeApp(dir, esm, backend = 'postgres', { libCheck = backend === 'hazelcast' } = {}) {
  await mkdir(join(dir, 'src'), { recursive: true });
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ name: 'quickstart', private: true, type: esm ? 'module' : 'commonjs' }, null, 2)}\n`);
  // The PostgreSQL and Redis apps keep `nest new`'s skipLibCheck: the package's option types name hazelcast-client's,
  // which these apps do not install (a gap of issue 38: checked with skipLibCheck off, they need its types; the
  // lib-types check adds them).
  const tsconfig = libCheck ? TSCONFIG : { ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, skipLibCheck: true } };
  await writeFile(join(dir, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  const modules = { redis: QUICKSTART_REDIS_MODULE, hazelcast: QUICKSTART_HZ_MODULE };
  const rewrites = [];
  for (const file of QUICKSTART_FILES) {
    let source = await readFile(file === 'app.module.ts' && modules[backend] ? modules[backend] : join(QUICKSTART, file), 'utf8');
    if (esm) {
      source = source.replace(/(from\s+|import\s+)(['"])(\.\.?\/[^'"]+?)\2/g, (all, lead, quote, path) => {
        if (/\.[cm]?js$/.test(path)) return all;
        rewrites.push(`${file}: ${path} -> ${path}.js`);
        return `${lead}${quote}${path}.js${quote}`;
      });
    }
    await writeFile(join(dir, 'src', file), source);
  }
  return rewrites;
}

/** In the ESM app: what the app imports and what the library requires must be the very same module instances (both entries). */
async function checkOneInstance(appDir) {
  const check = `
    import { createRequire } from 'node:module';
    import * as common from '@nestjs/common';
    import * as core from '@nestjs/core';
    import * as gatekeeper from 'nestjs-gatekeeper';
    import * as testing from 'nestjs-gatekeeper/testing';
    const fromLibrary = createRequire(import.meta.resolve('nestjs-gatekeeper'));
    const fromApp = createRequire(import.meta.url);
    const problems = [];
    if (fromLibrary('@nestjs/common') !== common) problems.push('@nestjs/common imported by the app and required by the library differ');
    if (fromLibrary('@nestjs/core') !== core) problems.push('@nestjs/core imported by the app and required by the library differ');
    if (fromApp('nestjs-gatekeeper').GatekeeperService !== gatekeeper.GatekeeperService) problems.push('nestjs-gatekeeper imported and required differ');
    // The testing entry resolves both ways too (package.json exports ./testing), to the same module instances.
    if (typeof testing.MemoryBackend !== 'function' || typeof testing.ManualClock !== 'function') problems.push('nestjs-gatekeeper/testing lacks MemoryBackend or ManualClock');
    if (fromApp('nestjs-gatekeeper/testing').MemoryBackend !== testing.MemoryBackend) problems.push('nestjs-gatekeeper/testing imported and required differ');

    if (problems.length) { console.error(problems.join('\\n')); process.exit(1); }
  `;
  await writeFile(join(appDir, 'one-instance.check.mjs'), check);
  await run(process.execPath, ['one-instance.check.mjs'], { cwd: appDir, timeoutMs: 30_000, what: 'the one-instance check' });
}

/** The CLI's options that reach `store`: a member, a PostgreSQL database or a Redis server. */
function cliStoreArgs(store) {
  if (store.postgresUrl) return ['--backend', 'postgres', '--pg-url', store.postgresUrl];
  if (store.redisUrl) return ['--backend', 'redis', '--redis-url', store.redisUrl];
  return ['--members', store.addresses.join(','), '--cluster-name', store.clusterName];
}

/** This process's environment without its GATEKEEPER_* variables, which could name another store, schema or path. */
function cleanEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GATEKEEPER_')));
}

/** The environment of an app (and of the CLI beside it) on `store`: the variables that name it, and no others. */
function storeEnv(store) {
  const env = cleanEnv();
  if (store.postgresUrl) return { ...env, GATEKEEPER_PG_URL: store.postgresUrl };
  if (store.redisUrl) return { ...env, GATEKEEPER_REDIS_URL: store.redisUrl };
  return { ...env, GATEKEEPER_HZ_MEMBERS: store.addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: store.clusterName };
}

/** Starts the compiled app, waits for the billing job's line, stops it with SIGTERM. */
async function runApp(name, appDir, store, installDir) {
  const [port] = await freePorts(1);
  const env = { ...storeEnv(store), PORT: String(port), GATEKEEPER_ADMIN_TOKEN: ADMIN_TOKEN, NO_COLOR: '1' };
  const started = Date.now();
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: appDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  let onOutput = () => {};
  const append = (d) => { output += d; onOutput(); };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise((res) => child.once('exit', (code, signal) => { children.delete(child); res({ code, signal }); }));
  try {
    const charged = await new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new SmokeError(`${name}: no "charging as ..." line within ${seconds(CHARGE_TIMEOUT_MS)}`, output)), CHARGE_TIMEOUT_MS);
      onOutput = () => {
        const match = CHARGED.exec(output);
        if (match) { clearTimeout(timer); res({ acquirer: match[1], token: match[2], ms: Date.now() - started }); }
      };
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        rej(new SmokeError(`${name}: the app exited (code ${code}, signal ${signal}) before its billing job ran`, output));
      });
      onOutput();
    });
    // The package's CLI asks the running app about its job, as the README says: with the token and the store in the
    // app's own variables, and no address configured (the app advertises the one it listens on).
    const bin = join(installDir, 'node_modules', '.bin', 'nestjs-gatekeeper');
    const described = JSON.parse(await run(bin, ['jobs', 'describe', 'BillingJobs.chargeCustomers', '--json'],
      { cwd: appDir, env, timeoutMs: 30_000, what: 'nestjs-gatekeeper jobs describe BillingJobs.chargeCustomers' }));
    if (described.semaphore !== 'billing' || described.cron !== '*/10 * * * * *') {
      throw new SmokeError(`${name}: jobs describe answered ${JSON.stringify(described).slice(0, 300)}`, output);
    }
    const stopAt = Date.now();
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    const { code, signal } = await exited.finally(() => clearTimeout(timer));
    const stopMs = Date.now() - stopAt;
    // enableShutdownHooks() closes the app, then raises the signal again (Nest's default): dying of that same
    // SIGTERM after the shutdown hooks ran is a clean stop; so is exit code 0 (`useProcessExit`).
    if (!(code === 0 || signal === 'SIGTERM')) throw new SmokeError(`${name}: SIGTERM did not stop the app cleanly (code ${code}, signal ${signal}, after ${seconds(stopMs)})`, output);
    if (/\bERROR\b/.test(output)) throw new SmokeError(`${name}: the app logged an error`, output);
    // The permit was released at shutdown, not left to expire: asked through the package's own CLI binary.
    const cli = await run(join(installDir, 'node_modules', '.bin', 'nestjs-gatekeeper'),
      ['permits', 'billing', '--json', ...cliStoreArgs(store)],
      { cwd: appDir, timeoutMs: 30_000, what: 'nestjs-gatekeeper permits billing' });
    const held = JSON.parse(cli).flatMap((s) => s.permits ?? []);
    if (held.length) throw new SmokeError(`${name}: "billing" still held after the app stopped: ${JSON.stringify(held)}`, output);
    return { ...charged, stopMs, exit: code === 0 ? 'exit 0' : 'SIGTERM' };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    await writeFile(join(appDir, 'app.log'), output); // kept with --keep (and on failure)
  }
}

/** Starts the compiled app with `env`; returns a handle to watch its output and stop it. */
function startApp(appDir, env) {
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: appDir, env: { ...cleanEnv(), NO_COLOR: '1', GATEKEEPER_ADMIN_TOKEN: ADMIN_TOKEN, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const app = { output: '', child };
  const append = (d) => { app.output += d; };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  app.exited = new Promise((res) => child.once('exit', (code, signal) => { children.delete(child); res({ code, signal }); }));
  app.stop = async () => {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    return app.exited.finally(() => clearTimeout(timer));
  };
  return app;
}

/** Polls `check` over the app's output until it holds, or fails after `timeoutMs` saying `what`. */
async function waitFor(app, what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!check(app.output)) {
    if (Date.now() > deadline) throw new SmokeError(`first-day: no ${what} within ${seconds(timeoutMs)}`, app.output);
    await new Promise((res) => setTimeout(res, 100));
  }
}

const count = (text, pattern) => text.split('\n').filter((line) => pattern.test(line)).length;
const RECOVERY_WARN = /WARN.*billing.*store init/;
const CLIENT_LINE = /HazelcastClient|ClientConnectionManager|ClusterService|\b(VERBOSE|DEBUG)\b/;

/** The three first-day situations, with the Nest 11 app already compiled in `appDir`. */
async function checkFirstDay(installDir, appDir) {
  const bin = join(installDir, 'node_modules', '.bin', 'nestjs-gatekeeper');
  const notes = [];

  // No member: one line, within the connect timeout, no client chatter, no stack.
  const [closed] = await freePorts(1);
  const started = Date.now();
  const lonely = startApp(appDir, { GATEKEEPER_HZ_MEMBERS: `127.0.0.1:${closed}`, GATEKEEPER_HZ_CLUSTER_NAME: 'nobody' });
  const timer = setTimeout(() => lonely.child.kill('SIGKILL'), 90_000);
  const { code } = await lonely.exited.finally(() => clearTimeout(timer));
  const failedMs = Date.now() - started;
  if (code === 0 || code === null) throw new SmokeError(`first-day: with no member the app did not fail (code ${code})`, lonely.output);
  if (count(lonely.output, /Cannot reach Hazelcast cluster "nobody"/) !== 1) throw new SmokeError('first-day: with no member, not exactly one "Cannot reach" line', lonely.output);
  if (count(lonely.output, CLIENT_LINE) > 0) throw new SmokeError('first-day: with no member, the client logged', lonely.output);
  if (count(lonely.output, /^\s+at /) > 0) throw new SmokeError('first-day: with no member, a stack trace was printed', lonely.output);
  notes.push(`no member: failed in ${seconds(failedMs)} with one line`);

  // A member nobody declared new, as Docker or an operator starts one.
  const plain = await startCluster({ members: 1 });
  try {
    const env = { GATEKEEPER_HZ_MEMBERS: plain.addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: plain.clusterName };
    const cliArgs = ['--members', plain.addresses.join(','), '--cluster-name', plain.clusterName];
    const app = startApp(appDir, env);
    try {
      await waitFor(app, 'recovery warning', (out) => RECOVERY_WARN.test(out), CHARGE_TIMEOUT_MS);
      if (CHARGED.test(app.output)) throw new SmokeError('first-day: billing ran before the undeclared cluster was declared new', app.output);
      const declaredAt = Date.now();
      await run(bin, [...cliArgs, 'store', 'init'], { cwd: appDir, timeoutMs: 30_000, what: 'nestjs-gatekeeper store init' });
      await waitFor(app, '"charging as" after store init', (out) => CHARGED.test(out), 25_000);
      notes.push(`undeclared member: waited (said once at warn), then charged ${seconds(Date.now() - declaredAt)} after store init`);
      if (count(app.output, RECOVERY_WARN) !== 1) throw new SmokeError('first-day: the recovery wait was not said exactly once', app.output);

      // The member restarts under the running app: its data is lost, the app puts billing back and waits again.
      const chargedBefore = count(app.output, CHARGED);
      const restartedAt = Date.now();
      await plain.restartMember(0);
      await waitFor(app, 'billing put back after the restart', (out) => /The entry of "billing" was lost/.test(out), 90_000);
      const refused = spawn(bin, [...cliArgs, 'store', 'init'], { cwd: appDir, stdio: ['ignore', 'pipe', 'pipe'] });
      let said = '';
      refused.stdout.on('data', (d) => { said += d; });
      refused.stderr.on('data', (d) => { said += d; });
      const [refusedCode] = await once(refused, 'close');
      if (refusedCode !== 1 || !/refused, nothing changed/.test(said)) throw new SmokeError(`first-day: store init on the restarted member did not refuse (exit ${refusedCode})`, said);
      // How long billing waits, as the cluster says (about one permit duration, a minute): no charge may come before.
      const status = JSON.parse(await run(bin, [...cliArgs, 'permits', 'billing', '--json'], { cwd: appDir, timeoutMs: 30_000, what: 'nestjs-gatekeeper permits billing' }));
      const until = status.find((s) => s.name === 'billing')?.recoveringUntil;
      if (!(until > restartedAt + 30_000)) throw new SmokeError(`first-day: billing does not wait after the restart: ${JSON.stringify(status)}`, app.output);
      // Watched for two of its 10 s ticks, well inside the wait.
      await new Promise((res) => setTimeout(res, Math.max(0, Math.min(until - 5_000, Date.now() + 21_000) - Date.now())));
      if (count(app.output, CHARGED) !== chargedBefore) throw new SmokeError('first-day: billing ran on the restarted member during its recovery wait', app.output);
      notes.push(`restarted member: billing waits until ${seconds(until - restartedAt)} after the restart, store init refused, no charge in the 2 ticks watched`);
    } finally {
      await app.stop();
      await writeFile(join(appDir, 'first-day.log'), app.output);
    }
  } finally {
    await plain.stop().catch(() => {});
  }
  return notes.join('; ');
}

/**
 * The quickstart on a team's first day with no PostgreSQL to reach: it says it waits (once, naming the variable),
 * then fails within its connect timeout with one error line and no stack trace.
 */
async function checkFirstDayPostgres(appDir) {
  const [closed] = await freePorts(1);
  const started = Date.now();
  const app = startApp(appDir, { GATEKEEPER_PG_URL: `postgres://gatekeeper@127.0.0.1:${closed}/postgres` });
  const timer = setTimeout(() => app.child.kill('SIGKILL'), 90_000);
  const { code } = await app.exited.finally(() => clearTimeout(timer));
  await writeFile(join(appDir, 'first-day-postgres.log'), app.output);
  if (code === 0 || code === null) throw new SmokeError(`first-day: with no PostgreSQL the app did not fail (code ${code})`, app.output);
  if (count(app.output, /WARN.*Waiting for PostgreSQL at .*\(from GATEKEEPER_PG_URL\)/) !== 1) throw new SmokeError('first-day: with no PostgreSQL, the wait was not said once at warn', app.output);
  if (count(app.output, /Cannot reach PostgreSQL at .*GATEKEEPER_PG_URL/) !== 1) throw new SmokeError('first-day: with no PostgreSQL, not exactly one "Cannot reach" line', app.output);
  if (count(app.output, /^\s+at /) > 0) throw new SmokeError('first-day: with no PostgreSQL, a stack trace was printed', app.output);
  return `no PostgreSQL: said it waits, then failed in ${seconds(Date.now() - started)} with one line`;
}

/**
 * The package's .d.ts files checked as a strict app would (skipLibCheck off) with Nest 12's types, in an ESM and a
 * CommonJS app: the Nest 12 apps run with skipLibCheck on and no hazelcast-client, whose types the option types name,
 * so it is added here, as docs/backends.md tells such apps to.
 */
async function checkLibTypes(installDir) {
  await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', 'hazelcast-client@~5.6.0'],
    { cwd: installDir, timeoutMs: INSTALL_TIMEOUT_MS, what: 'npm install hazelcast-client (lib-types)' });
  for (const esm of [true, false]) {
    const appDir = join(installDir, `lib-types-${esm ? 'esm' : 'cjs'}`);
    await writeApp(appDir, esm, 'postgres', { libCheck: true });
    await run(join(installDir, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: appDir, timeoutMs: TSC_TIMEOUT_MS, what: `tsc (lib-types, ${esm ? 'ESM' : 'CommonJS'})` });
  }
  return `the package's .d.ts files compile with skipLibCheck off in the Nest 12 ESM and CommonJS apps (TypeScript ${await packageVersion(installDir, 'typescript')}, hazelcast-client ${await packageVersion(installDir, 'hazelcast-client')} added)`;
}

/** With @nestjs/schedule uninstalled: the library loads; a decorated method called by hand and withPermit run. */
async function checkWithoutSchedule(installDir) {
  await run('npm', ['uninstall', '--no-audit', '--no-fund', '@nestjs/schedule'], { cwd: installDir, timeoutMs: INSTALL_TIMEOUT_MS, what: 'npm uninstall @nestjs/schedule' });
  const dir = join(installDir, 'no-schedule');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  await writeFile(join(dir, 'check.mjs'), `
    import 'reflect-metadata';
    import { createRequire } from 'node:module';
    import { Injectable, Module } from '@nestjs/common';
    import { NestFactory } from '@nestjs/core';
    import { ClusterSingleton, GatekeeperModule, GatekeeperService } from 'nestjs-gatekeeper';
    const fail = (message) => { console.error(message); process.exit(1); };
    try { createRequire(import.meta.url).resolve('@nestjs/schedule'); fail('@nestjs/schedule is still installed'); } catch {}

    class Jobs {
      constructor(gatekeeper) { this.gatekeeper = gatekeeper; }
      async reindex() { return this.gatekeeper.currentPermit()?.semaphore; }
    }
    Object.defineProperty(Jobs.prototype, 'reindex', Reflect.decorate([ClusterSingleton('reindex', '10s')], Jobs.prototype,
      'reindex', Object.getOwnPropertyDescriptor(Jobs.prototype, 'reindex')));
    Reflect.defineMetadata('design:paramtypes', [GatekeeperService], Jobs);
    Injectable()(Jobs);
    class AppModule {}
    Module({ imports: [GatekeeperModule.forRoot({ backend: 'memory', definitions: [{ name: 'manual', duration: '10s' }] })], providers: [Jobs] })(AppModule);

    const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
    const ran = await app.get(Jobs).reindex();
    if (ran !== 'reindex') fail('the decorated method did not run under its permit: ' + ran);
    const result = await app.get(GatekeeperService).withPermit('manual', () => 42);
    if (!result.ran || result.value !== 42) fail('withPermit did not run: ' + JSON.stringify(result));
    await app.close();
  `);
  await run(process.execPath, ['check.mjs'], { cwd: dir, timeoutMs: 60_000, what: 'the no-schedule check' });
}

async function main() {
  const { values } = parseArgs({
    options: {
      apps: { type: 'string', default: [...Object.keys(APPS), ...CHECKS].join(',') },
      keep: { type: 'boolean', default: false },
      'member-port': { type: 'string' },
      'cluster-name': { type: 'string' },
    },
  });
  const wanted = values.apps.split(',').map((a) => a.trim()).filter(Boolean);
  const unknown = wanted.filter((a) => !(a in APPS) && !CHECKS.includes(a));
  if (unknown.length || wanted.length === 0) throw new Error(`--apps: unknown "${unknown.join(', ')}"; choose from ${[...Object.keys(APPS), ...CHECKS].join(', ')}`);
  const apps = wanted.filter((a) => a in APPS);
  const majors = [...new Set([...apps.map((a) => APPS[a].major), ...(wanted.includes('lib-types') || wanted.includes('no-schedule') ? [12] : []),
    ...(wanted.includes('first-day') ? [11, '11-hz'] : [])])];

  const missing = [];
  for (const file of QUICKSTART_FILES) await readFile(join(QUICKSTART, file)).catch(() => missing.push(file));
  if (missing.length) throw new Error(`no quickstart to install: ${missing.map((f) => `examples/quickstart/${f}`).join(', ')} missing`);

  const began = Date.now();
  const workDir = await mkdtemp(join(tmpdir(), 'gatekeeper-smoke-'));
  let cluster;
  let postgres;
  let postgresUrl;
  let redis;
  let failed = true;
  try {
    const { tarball, entryCount } = await pack(workDir);
    log(`packed ${tarball} (${entryCount} files) in ${seconds(Date.now() - began)}`);

    const memberPort = values['member-port'] ? Number(values['member-port']) : undefined;
    const on = (store) => apps.some((a) => APPS[a].store === store);
    // GATEKEEPER_PG_URL's server when set (not ours to stop), else a throwaway one.
    const postgresReady = !on('postgres') ? Promise.resolve() : postgresFromEnv() ? Promise.resolve(postgresFromEnv()).then((server) => { postgresUrl = server.url; })
      : startPostgres().then((server) => { postgres = server; postgresUrl = server.url; });
    const redisReady = on('redis') ? startRedis().then((server) => { redis = server; }) : Promise.resolve();
    const clusterReady = !on('hazelcast') ? Promise.resolve() : startCluster({ members: 1, ports: memberPort ? [memberPort] : undefined, clusterName: values['cluster-name'] })
      .then(async (c) => { cluster = c; await declareFreshCluster(c); return c; });
    const installs = Object.fromEntries(majors.map((major) => {
      const dir = join(workDir, `nest${major}`);
      return [major, install(dir, major, tarball).then((versions) => ({ dir, versions }))];
    }));
    // Settle all before going on, so a failure leaves nothing running behind our back.
    const settled = await Promise.allSettled([clusterReady, postgresReady, redisReady, ...Object.values(installs)]);
    const rejected = settled.find((s) => s.status === 'rejected');
    if (rejected) throw rejected.reason;
    log(`${cluster ? `member ${cluster.addresses.join(',')} (cluster ${cluster.clusterName}) up and declared new; ` : ''}${postgresUrl ? `PostgreSQL at ${postgresUrl}${postgres ? '' : ' (GATEKEEPER_PG_URL)'}; ` : ''}${redis ? `Redis at ${redis.url}; ` : ''}installs done in ${seconds(Date.now() - began)}`);

    const results = [];
    for (const name of apps) {
      const { major, esm, store: backend } = APPS[name];
      const onRedis = backend === 'redis';
      const { dir: installDir, versions } = await installs[major];
      const appDir = join(installDir, name);
      const rewrites = await writeApp(appDir, esm, backend);
      const compileStart = Date.now();
      await run(join(installDir, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: appDir, timeoutMs: TSC_TIMEOUT_MS, what: `tsc (${name})` });
      const compileMs = Date.now() - compileStart;
      if (esm) await checkOneInstance(appDir);
      const store = backend === 'postgres' ? { postgresUrl } : onRedis ? { redisUrl: redis.url } : cluster;
      let declared = '';
      if (onRedis) {
        // A new Redis: declared new by the package's own CLI, as the README and the guide say (the store from the
        // app's GATEKEEPER_REDIS_URL, no flag), or the first tick waits a minute.
        const said = await run(join(installDir, 'node_modules', '.bin', 'nestjs-gatekeeper'), ['store', 'init'],
          { cwd: appDir, env: storeEnv(store), timeoutMs: 30_000, what: 'nestjs-gatekeeper --backend redis store init' });
        if (!/Declared Redis prefix "gatekeeper" new/.test(said)) throw new SmokeError(`${name}: store init did not declare the prefix new`, said);
        declared = 'prefix declared new by store init; ';
      }
      const outcome = await runApp(name, appDir, store, installDir);
      const made = `Nest ${versions['@nestjs/core']}, @nestjs/schedule ${versions['@nestjs/schedule']}, TypeScript ${versions.typescript}, `
        + (backend === 'postgres' ? `pg ${versions.pg}` : onRedis ? `ioredis ${versions.ioredis}` : `hazelcast-client ${versions['hazelcast-client']}`);
      log(`${name} (${made}): compiled in ${seconds(compileMs)}${rewrites.length ? ` (ESM: rewrote ${rewrites.join(', ')})` : ''}; ${declared}`
        + `charging as ${outcome.acquirer} (token ${outcome.token}) ${seconds(outcome.ms)} after start; stopped by SIGTERM in ${outcome.stopMs} ms (${outcome.exit === 'SIGTERM' ? 'died of the SIGTERM Nest raises again after its shutdown hooks' : outcome.exit}), permit released`);
      results.push(`${name} ok`);
    }
    if (wanted.includes('first-day')) {
      const compiled = async (major, backend) => {
        const { dir: installDir } = await installs[major];
        const appDir = join(installDir, 'first-day');
        await writeApp(appDir, false, backend);
        await run(join(installDir, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: appDir, timeoutMs: TSC_TIMEOUT_MS, what: `tsc (first-day, ${backend})` });
        return { installDir, appDir };
      };
      // Side by side: each mostly waits out a connect timeout.
      const checks = await Promise.allSettled([
        compiled(11, 'postgres').then(({ appDir }) => checkFirstDayPostgres(appDir)),
        compiled('11-hz', 'hazelcast').then(({ installDir, appDir }) => checkFirstDay(installDir, appDir)),
      ]);
      const failedCheck = checks.find((c) => c.status === 'rejected');
      if (failedCheck) throw failedCheck.reason;
      const [pgNotes, hzNotes] = checks.map((c) => c.value);
      log(`first-day: ${pgNotes}; ${hzNotes}`);
      results.push('first-day ok');
    }
    if (wanted.includes('lib-types')) {
      log(`lib-types: ${await checkLibTypes((await installs[12]).dir)}`);
      results.push('lib-types ok');
    }
    if (wanted.includes('no-schedule')) {
      await checkWithoutSchedule((await installs[12]).dir);
      log('no-schedule: without @nestjs/schedule the library loads, a decorated method called by hand and withPermit ran');
      results.push('no-schedule ok');
    }
    failed = false;
    console.log(`packed-app smoke passed in ${seconds(Date.now() - began)}: ${results.join(', ')}`);
  } finally {
    await cluster?.stop().catch(() => {});
    await postgres?.stop().catch(() => {});
    await redis?.stop().catch(() => {});
    if (values.keep || failed) log(`kept ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

// Ctrl-C or a CI timeout: take the apps and the member down with us (process.exit runs hazelcast.mjs's exit hook).
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill('SIGKILL');
    process.exit(130);
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (error) => {
      for (const child of children) child.kill('SIGKILL');
      console.error(`packed-app smoke FAILED: ${error.message}`);
      process.exit(1);
    },
  );
}
