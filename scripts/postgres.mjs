#!/usr/bin/env node
// Runs a throwaway PostgreSQL server on 127.0.0.1 for tests, benchmarks and the sample app, from the binaries
// installed on the machine (Debian: apt-get install postgresql), with no Docker: initdb in a temporary folder, then
// pg_ctl on a free port. The folder goes when the server stops.
//
//   node scripts/postgres.mjs start [--port 5432]     prints the connection string, stops on Ctrl-C
//
// Anything that needs a server should try postgresFromEnv() first, so it can be pointed at an existing one with
// GATEKEEPER_PG_URL instead.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { chown, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePorts } from './local-servers.mjs';

const HOST = '127.0.0.1';
const USER = 'gatekeeper';

/** The folder of PostgreSQL's server binaries (`initdb`, `pg_ctl`): on PATH, or Debian's newest under /usr/lib/postgresql. */
export function postgresBinDir() {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  // Through a link to the real folder, which holds pg_dump, pg_basebackup and the rest beside them.
  if (onPath) return resolve(realpathSync(onPath), '..');
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) {
    throw new Error('PostgreSQL server binaries (initdb, pg_ctl) not found: install them (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql), or point GATEKEEPER_PG_URL at a server');
  }
  return join(root, versions[0], 'bin');
}

/** The server to use from the environment (GATEKEEPER_PG_URL), or undefined. */
export function postgresFromEnv() {
  const url = process.env.GATEKEEPER_PG_URL;
  return url ? { url } : undefined;
}

/**
 * Starts a server in a new temporary folder and resolves once it accepts connections.
 * @param {{ port?: number, durable?: boolean, settings?: Record<string, string | number> }} [options] `durable: false`
 *   (the default) turns fsync off: a test server loses nothing when its process is killed, only when the machine is.
 * @returns {Promise<{ url: string, port: number, dataDir: string, pid: () => number | undefined, stop: (mode?: 'fast' | 'immediate') => Promise<void>, kill: (signal: NodeJS.Signals) => void, start: () => Promise<void> }>}
 */
export async function startPostgres({ port, durable = false, settings = {} } = {}) {
  const bin = postgresBinDir();
  const dataDir = await mkdtemp(join(tmpdir(), 'gatekeeper-pg-'));
  // PostgreSQL refuses to run as root: as root, the folder and the server belong to the postgres user.
  const asRoot = process.getuid?.() === 0;
  const run = (command, args) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  };
  if (asRoot) {
    const ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
    const gid = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
    await chown(dataDir, Number(ids), Number(gid));
  }
  const serverPort = port ?? (await freePorts(1))[0];
  run('initdb', ['-D', dataDir, '-U', USER, '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C']);
  const options = {
    port: serverPort, listen_addresses: HOST, unix_socket_directories: dataDir, max_connections: 300, fsync: durable ? 'on' : 'off',
    full_page_writes: durable ? 'on' : 'off', ...settings,
  };
  const argsFor = (values) => Object.entries(values).map(([k, v]) => `-c ${k}=${v}`).join(' ');
  const serverArgs = argsFor(options);
  const start = async () => {
    run('pg_ctl', ['-D', dataDir, '-o', serverArgs, '-l', join(dataDir, 'server.log'), '-w', '-t', '60', 'start']);
  };
  await start();
  // A folder of the server's user for what outlives the data folder: dumps, a replica's data.
  const spare = await mkdtemp(join(tmpdir(), 'gatekeeper-pg-spare-'));
  if (asRoot) {
    await chown(spare, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()));
  }
  const dumpFile = join(spare, 'state.dump');
  const standbyDir = join(spare, 'standby');
  let standbyPort;
  const local = ['-h', HOST, '-p', String(serverPort), '-U', USER];
  const pid = () => {
    try {
      return Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
    } catch {
      return undefined;
    }
  };
  return {
    url: `postgres://${USER}@${HOST}:${serverPort}/postgres`,
    port: serverPort,
    dataDir,
    pid,
    start,
    kill: (signal) => {
      const p = pid();
      if (p) process.kill(p, signal);
    },
    async stop(mode = 'immediate') {
      for (const dir of [dataDir, standbyDir]) {
        try {
          if (existsSync(join(dir, 'postmaster.pid'))) run('pg_ctl', ['-D', dir, '-m', mode, '-w', 'stop']);
        } catch {
          // Not running.
        }
      }
      await rm(dataDir, { recursive: true, force: true });
      await rm(spare, { recursive: true, force: true });
    },
    /** Saves the whole database as it is now (`pg_dump`), for {@link restoreFresh}. */
    async dump() {
      run('pg_dump', [...local, '-Fc', '-f', dumpFile, 'postgres']);
    },
    /**
     * A restore from that backup into a new server: the running one is gone (stopped at once), a new one is made in its
     * folder on its port, and the dump restored into it in one transaction (no client sees a half-restored schema).
     */
    async restoreFresh() {
      run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      await emptyFolder(dataDir);
      run('initdb', ['-D', dataDir, '-U', USER, '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C']);
      await start();
      run('pg_restore', [...local, '--single-transaction', '-d', 'postgres', dumpFile]);
    },
    /** Starts a streaming replica of the server (`pg_basebackup`) on a port of its own, and resolves once it replays. */
    async startStandby() {
      standbyPort = (await freePorts(1))[0];
      run('pg_basebackup', [...local, '-D', standbyDir, '-R', '-X', 'stream', '--no-sync']);
      run('pg_ctl', ['-D', standbyDir, '-o', argsFor({ ...options, port: standbyPort, unix_socket_directories: standbyDir }), '-l', join(spare, 'standby.log'), '-w', '-t', '60', 'start']);
    },
    /** Stops the replica: from now on it misses every commit of the server. */
    async stopStandby() {
      run('pg_ctl', ['-D', standbyDir, '-m', 'fast', '-w', 'stop']);
    },
    /**
     * A failover to the replica after the server died: the server is killed, the replica's data takes its folder and
     * port, and it is promoted (a new timeline), with whatever it had not received lost.
     */
    async failover() {
      const p = pid();
      const pids = p ? serverProcesses(p) : [];
      for (const child of pids) signal(child, 'SIGKILL');
      while (pids.some(alive)) await new Promise((done) => setTimeout(done, 20));
      await rm(dataDir, { recursive: true, force: true });
      await rename(standbyDir, dataDir);
      // No server to stream from: it waits as a replica until promoted.
      await writeFile(join(dataDir, 'postgresql.auto.conf'), '');
      await rm(join(dataDir, 'postmaster.pid'), { force: true });
      await start();
      run('pg_ctl', ['-D', dataDir, '-w', '-t', '60', 'promote']);
    },
  };
}

/** Deletes what a folder holds, keeping the folder (and its owner). */
async function emptyFolder(dir) {
  for (const entry of readdirSync(dir)) await rm(join(dir, entry), { recursive: true, force: true });
}

/**
 * `start --control`: for tests that fault the server. Prints one JSON line ({ url, port, dataDir }), then takes
 * commands on stdin, one a line, each answered by a JSON line: `kill` (SIGKILL the server and its backends, as a crash), `start`,
 * `freeze` (SIGSTOP the server and every backend: it holds its connections and answers nothing, a stalled machine),
 * `resume` (SIGCONT), `dump` and `restore-fresh` (a backup, and later its restore into a new server on the same
 * port), `standby`, `standby-stop` and `failover` (a streaming replica, stopped so it misses commits, then promoted
 * in the server's place after the server dies), and `stop` (stop, delete the folders, exit). Stdin closing stops it too.
 */
async function control(server) {
  const { createInterface } = await import('node:readline');
  const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
  answer({ ok: true, url: server.url, port: server.port, dataDir: server.dataDir });
  const lines = createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  const quit = () => void queue.then(() => server.stop()).finally(() => process.exit(0));
  lines.on('close', quit);
  lines.on('line', (line) => {
    queue = queue.then(async () => {
      try {
        if (line === 'kill') {
          // The postmaster and every backend at once, as a crash of the machine would.
          const pids = serverProcesses(server.pid());
          for (const pid of pids) signal(pid, 'SIGKILL');
          // Gone once no pid answers a signal.
          while (pids.some(alive)) await new Promise((done) => setTimeout(done, 20));
        } else if (line === 'start') {
          await server.start();
        } else if (line === 'freeze') {
          // The postmaster first, so it forks no backend the loop would miss.
          for (const pid of serverProcesses(server.pid())) signal(pid, 'SIGSTOP');
        } else if (line === 'resume') {
          for (const pid of serverProcesses(server.pid()).reverse()) signal(pid, 'SIGCONT');
        } else if (line === 'dump') {
          await server.dump();
        } else if (line === 'restore-fresh') {
          await server.restoreFresh();
        } else if (line === 'standby') {
          await server.startStandby();
        } else if (line === 'standby-stop') {
          await server.stopStandby();
        } else if (line === 'failover') {
          await server.failover();
        } else if (line === 'stop') {
          quit();
          return;
        } else {
          throw new Error(`unknown command ${JSON.stringify(line)}`);
        }
        answer({ ok: true, cmd: line });
      } catch (error) {
        answer({ ok: false, cmd: line, error: error.message });
      }
    });
  });
}

/** The postmaster `pid` and its children (the backends and background workers), from /proc. */
function serverProcesses(pid) {
  if (pid === undefined) throw new Error('the server is not running');
  const children = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((entry) => {
    try {
      // Field 4 of /proc/<pid>/stat, after the command in parentheses, is the parent's pid.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] === String(pid);
    } catch {
      return false; // gone meanwhile
    }
  });
  return [pid, ...children.map(Number)];
}

function signal(pid, name) {
  try {
    process.kill(pid, name);
  } catch {
    // Gone meanwhile.
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function main() {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { port: { type: 'string' }, control: { type: 'boolean' } } });
  if (positionals[0] !== 'start') {
    process.stderr.write('usage: node scripts/postgres.mjs start [--port 5432] [--control]\n');
    process.exit(2);
  }
  const server = await startPostgres({ port: values.port ? Number(values.port) : undefined, durable: !values.control });
  if (values.control) return control(server);
  process.stdout.write(`PostgreSQL running: ${server.url}\n(Ctrl-C stops it and deletes its data)\n`);
  const stop = () => void server.stop().finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  setInterval(() => undefined, 1 << 30);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });
}
