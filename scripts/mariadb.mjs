#!/usr/bin/env node
// Runs a throwaway MariaDB server on 127.0.0.1 for the fenced writes' MySQL tests, from the `mariadbd` installed on
// the machine (Debian: apt-get install mariadb-server; macOS: brew install mariadb), with no Docker: a data folder
// made by mariadb-install-db in a temporary folder, on a free port, with no passwords (grant tables skipped: the
// server listens on 127.0.0.1 only and holds nothing but test data). The folder goes when the server stops.
//
//   node scripts/mariadb.mjs start [--port 3306] [--durable]     prints the URL, stops on Ctrl-C
//
// --durable runs it as a user runs one: every COMMIT flushed to disk (InnoDB's default); the tests' server skips that.
//
// Anything that needs a server should try mariadbFromEnv() first, so it can be pointed at an existing one (MySQL or
// MariaDB) with GATEKEEPER_MYSQL_URL instead.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePorts, killOnExit } from './local-servers.mjs';

const HOST = '127.0.0.1';
const DATABASE = 'gatekeeper';
const MISSING = 'mariadbd not found: install MariaDB (Debian/Ubuntu: apt-get install mariadb-server; macOS: brew install mariadb), or point GATEKEEPER_MYSQL_URL at a server';

/** The path of a MariaDB program (`mariadbd`, `mariadb-install-db`): on the PATH or in /usr/sbin; throws when missing. */
function program(name) {
  const found = (spawnSync('sh', ['-c', `command -v ${name} || ls /usr/sbin/${name} 2>/dev/null`], { encoding: 'utf8' }).stdout ?? '').trim().split('\n')[0];
  if (!found) throw new Error(MISSING);
  return found;
}

/** The server to use from the environment (GATEKEEPER_MYSQL_URL), or undefined. */
export function mariadbFromEnv() {
  const url = process.env.GATEKEEPER_MYSQL_URL;
  return url ? { url } : undefined;
}

/** Whether something accepts connections on the port. */
function accepts(port) {
  return new Promise((done) => {
    const socket = connect({ host: HOST, port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

/**
 * Starts a server in a new temporary folder, makes the database `gatekeeper`, and resolves once it accepts
 * connections.
 * @param {{ port?: number, durable?: boolean }} [options] `durable: true` flushes InnoDB's log at every COMMIT, as
 *   the server's default and a user's server do; without it (the tests') a crash of the machine may lose the last
 *   transactions, a crash of the process none.
 * @returns {Promise<{ url: string, port: number, dir: string, pid: () => number | undefined, stop: () => Promise<void> }>}
 */
export async function startMariadb({ port, durable = false } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'gatekeeper-mariadb-'));
  const data = join(dir, 'data');
  const serverPort = port ?? (await freePorts(1))[0];
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? ['--user=root'] : [];
  execFileSync(program('mariadb-install-db'), ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...user], { stdio: 'ignore' });
  const child = spawn(program('mariadbd'), [
    '--no-defaults', `--datadir=${data}`, `--port=${serverPort}`, `--bind-address=${HOST}`, `--socket=${join(dir, 'mariadb.sock')}`,
    `--pid-file=${join(dir, 'mariadb.pid')}`, `--log-error=${join(dir, 'server.log')}`, '--skip-grant-tables', '--skip-log-bin',
    // A test server: nothing needs to survive a crash of the machine.
    `--innodb-flush-log-at-trx-commit=${durable ? 1 : 0}`, '--innodb-buffer-pool-size=64M', '--max-connections=300', ...user,
  ], { stdio: 'ignore' });
  killOnExit(child, dir);
  const deadline = Date.now() + 60_000;
  while (!(await accepts(serverPort))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`mariadbd did not start on port ${serverPort} (see ${join(dir, 'server.log')})`);
    await sleep(50);
  }
  execFileSync(program('mariadb'), ['-h', HOST, '-P', String(serverPort), '-u', 'root', '-e', `CREATE DATABASE IF NOT EXISTS ${DATABASE}`], { stdio: 'ignore' });
  return {
    url: `mysql://root@${HOST}:${serverPort}/${DATABASE}`,
    port: serverPort,
    dir,
    pid: () => (child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL'); // its data goes with the folder: nothing to save
        await once(child, 'exit');
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { port: { type: 'string' }, durable: { type: 'boolean' } } });
  if (positionals[0] !== 'start') {
    process.stderr.write('usage: node scripts/mariadb.mjs start [--port 3306] [--durable]\n');
    process.exit(2);
  }
  const server = await startMariadb({ port: values.port ? Number(values.port) : undefined, durable: values.durable === true });
  process.stdout.write(`MariaDB running: ${server.url}\n(Ctrl-C stops it and deletes its data)\n`);
  const stop = () => void server.stop().finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
