#!/usr/bin/env node
// Runs a throwaway Redis server on 127.0.0.1 for tests, benchmarks and the sample app, from the `redis-server`
// installed on the machine (Debian: apt-get install redis-server; macOS: brew install redis), with no Docker: a
// config file in a temporary folder (its working `dir`, where the AOF and any RDB snapshot go), on a free port. The
// folder goes when the server stops.
//
//   node scripts/redis.mjs start [--port 6379] [--no-appendonly]     prints the URL, stops on Ctrl-C
//
// Anything that needs a server should try redisFromEnv() first, so it can be pointed at an existing one with
// GATEKEEPER_REDIS_URL instead.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePorts, killOnExit } from './local-servers.mjs';

const HOST = '127.0.0.1';
const MISSING = 'redis-server not found on the PATH: install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), or point GATEKEEPER_REDIS_URL at a server';

/** The path of `redis-server` on the PATH; throws, saying how to get one, when there is none. */
export function redisServerPath() {
  const onPath = (spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout ?? '').trim();
  if (!onPath) throw new Error(MISSING);
  return onPath;
}

/** The server to use from the environment (GATEKEEPER_REDIS_URL), or undefined. */
export function redisFromEnv() {
  const url = process.env.GATEKEEPER_REDIS_URL;
  return url ? { url } : undefined;
}

/** One inline PING on a new connection: whether the server answered `+PONG` (not `-LOADING`, still reading its AOF). */
function ping(port) {
  return new Promise((done) => {
    const socket = connect({ host: HOST, port });
    let reply = '';
    const finish = (ok) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}

/**
 * Starts a server in a new temporary folder and resolves once it answers PING.
 * @param {{ port?: number, appendonly?: boolean, save?: string, replicaOf?: number, detached?: boolean }} [options] `appendonly` (the
 *   default) keeps an AOF fsynced every second: a SIGKILLed server comes back with every acknowledged write (only a
 *   crash of the machine loses the last second); `appendonly: false` keeps nothing across a kill. `save` is Redis's
 *   RDB snapshot schedule (`'3600 1 300 100'`), none by default. `replicaOf` makes it a replica of the server on that
 *   port of 127.0.0.1. `detached` runs it in a process group of its own, so a Ctrl-C in the terminal (SIGINT to the
 *   whole foreground group) reaches only the caller, which stops it when it is ready to (the sample app: after its
 *   instances released their permits); killed if this process exits without stopping it.
 * @returns {Promise<{ url: string, port: number, dir: string, pid: () => number | undefined, stop: () => Promise<void>, shutdown: () => Promise<void>, kill: (signal: NodeJS.Signals) => void, start: () => Promise<void> }>}
 */
export async function startRedis({ port, appendonly = true, save = '', replicaOf, detached = false } = {}) {
  const bin = redisServerPath();
  const dir = await mkdtemp(join(tmpdir(), 'gatekeeper-redis-'));
  const serverPort = port ?? (await freePorts(1))[0];
  const logFile = join(dir, 'server.log');
  const configFile = join(dir, 'redis.conf');
  // A config file rather than arguments: CONFIG REWRITE (after REPLICAOF NO ONE, say) then lasts across a restart.
  const config = [
    `bind ${HOST}`,
    `port ${serverPort}`,
    `dir "${dir}"`,
    'daemonize no',
    `logfile "${logFile}"`,
    `appendonly ${appendonly ? 'yes' : 'no'}`,
    'appendfsync everysec',
    save.trim() === '' ? 'save ""' : `save ${save.trim()}`,
    // A replica's first sync at once, not after the 5 s Redis waits for more replicas to share it.
    'repl-diskless-sync-delay 0',
    ...(replicaOf === undefined ? [] : [`replicaof ${HOST} ${replicaOf}`]),
  ];
  await writeFile(configFile, `${config.join('\n')}\n`);
  let child;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const pid = () => (running() ? child.pid : undefined);
  /** Resolves once the current process is gone (at once if none runs). */
  const exited = async () => {
    if (running()) await once(child, 'exit');
  };
  const start = async () => {
    if (running()) throw new Error(`redis-server on port ${serverPort} is already running`);
    // Not detached unless asked: a Ctrl-C in the terminal reaches it too, and nothing outlives the process that
    // started it. Detached, the exit hook below kills it.
    const server = spawn(bin, [configFile], { cwd: dir, stdio: 'ignore', detached });
    child = server;
    if (detached) {
      killOnExit(server, dir);
    }
    const failed = new Promise((_, fail) => {
      server.once('error', (error) => fail(error.code === 'ENOENT' ? new Error(MISSING) : error));
      server.once('exit', (code, signal) => {
        let log = '';
        try {
          log = readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
        } catch {
          // No log yet.
        }
        fail(new Error(`redis-server on port ${serverPort} exited (${signal ?? code}) before answering PING:\n${log}`));
      });
    });
    failed.catch(() => undefined);
    const ready = (async () => {
      const deadline = Date.now() + 60_000;
      while (server.exitCode === null && server.signalCode === null) {
        if (await ping(serverPort)) return;
        if (Date.now() > deadline) throw new Error(`redis-server on port ${serverPort} did not answer PING within 60 s (log: ${logFile})`);
        await sleep(20);
      }
      await failed; // it exited: say why
    })();
    await Promise.race([ready, failed]);
  };
  try {
    await start();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `redis://${HOST}:${serverPort}`,
    port: serverPort,
    dir,
    pid,
    /** Starts it again, on the same port and folder (its AOF replayed), once it was killed or shut down. */
    start,
    /** Sends the server a signal: SIGKILL (a crash), SIGSTOP (frozen, its connections held), SIGCONT. */
    kill: (signal) => {
      const p = pid();
      if (p) process.kill(p, signal);
    },
    /** Stops it as an administrator would (SIGTERM: the AOF flushed, a snapshot saved if `save` is set), keeping its folder. */
    async shutdown() {
      if (!running()) return;
      const server = child;
      server.kill('SIGCONT'); // a frozen server handles no SIGTERM
      // Redis refuses a SIGTERM while it writes its first AOF (just after a replica's sync, say) and waits for the next:
      // one again until it goes.
      const gone = once(server, 'exit');
      const deadline = Date.now() + 60_000;
      while (server.exitCode === null && server.signalCode === null) {
        if (Date.now() > deadline) throw new Error(`redis-server on port ${serverPort} did not shut down within 60 s (log: ${logFile})`);
        server.kill('SIGTERM');
        await Promise.race([gone, sleep(200)]);
      }
    },
    /** Ends it and deletes its folder. */
    async stop() {
      if (running()) {
        const gone = exited();
        child.kill('SIGKILL'); // its data goes with the folder: nothing to save
        await gone;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `start --control`: for tests that fault the server. Prints one JSON line ({ url, port, dir }), then takes commands on
 * stdin, one a line, each answered by a JSON line: `kill` (SIGKILL, as a crash; answered once it is gone), `start`
 * (again, on the same port and folder), `shutdown` (SIGTERM, keeping the folder), `freeze` (SIGSTOP: it holds its
 * connections and answers nothing, a stalled machine), `resume` (SIGCONT), and `stop` (stop, delete the folder, exit).
 * Stdin closing stops it too.
 */
async function control(server) {
  const { createInterface } = await import('node:readline');
  const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
  answer({ ok: true, url: server.url, port: server.port, dir: server.dir });
  const lines = createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  const quit = () => void queue.then(() => server.stop()).finally(() => process.exit(0));
  lines.on('close', quit);
  process.once('SIGINT', quit);
  process.once('SIGTERM', quit);
  lines.on('line', (line) => {
    queue = queue.then(async () => {
      try {
        if (line === 'kill') {
          const pid = server.pid();
          if (pid === undefined) throw new Error('the server is not running');
          server.kill('SIGKILL');
          // Gone once the pid answers no signal.
          while (alive(pid)) await sleep(10);
          // And reaped, so that pid() no longer names it.
          while (server.pid() !== undefined) await sleep(10);
        } else if (line === 'start') {
          await server.start();
        } else if (line === 'shutdown') {
          await server.shutdown();
        } else if (line === 'freeze') {
          server.kill('SIGSTOP');
        } else if (line === 'resume') {
          server.kill('SIGCONT');
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

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      port: { type: 'string' }, 'no-appendonly': { type: 'boolean' }, save: { type: 'string' }, 'replica-of': { type: 'string' },
      control: { type: 'boolean' },
    },
  });
  if (positionals[0] !== 'start') {
    process.stderr.write('usage: node scripts/redis.mjs start [--port 6379] [--no-appendonly] [--save "3600 1"] [--replica-of <port>] [--control]\n');
    process.exit(2);
  }
  const options = {
    port: values.port ? Number(values.port) : undefined,
    appendonly: !values['no-appendonly'],
    save: values.save ?? '',
    replicaOf: values['replica-of'] ? Number(values['replica-of']) : undefined,
  };
  let server;
  try {
    server = await startRedis(options);
  } catch (error) {
    if (values.control) {
      process.stdout.write(`${JSON.stringify({ ok: false, error: error.message })}\n`);
      process.exit(1);
    }
    throw error;
  }
  if (values.control) return control(server);
  process.stdout.write(`Redis running: ${server.url}\n(Ctrl-C stops it and deletes its data)\n`);
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
