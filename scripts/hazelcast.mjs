#!/usr/bin/env node
// Fetches the open-source Hazelcast member jar from Maven Central and runs
// real members on 127.0.0.1 for tests, benchmarks and the sample app.
//
//   node scripts/hazelcast.mjs fetch
//   node scripts/hazelcast.mjs start --members 3 --port 5701
//
// Anything that needs a cluster should try clusterFromEnv() first, so it can be
// pointed at an existing cluster with GATEKEEPER_HZ_MEMBERS instead.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, openSync, rmSync, writeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { freePorts } from './local-servers.mjs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, stripVTControlCharacters } from 'node:util';
import hz from 'hazelcast-client';
import { declareFreshCluster } from './fresh-cluster.mjs';

const { Client } = hz;

/** Hazelcast member version to run; override with env GATEKEEPER_HZ_VERSION. */
export const HAZELCAST_VERSION = process.env.GATEKEEPER_HZ_VERSION || '5.6.0';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';
const MAIN_CLASS = 'com.hazelcast.core.server.HazelcastMemberStarter';
const JAVA = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';

const JVM_FLAGS = [
  // Simple GC and C1 only: members start noticeably faster.
  '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1',
  // What Hazelcast's own start script passes on JDK 9+; silences its warnings.
  '--add-modules', 'java.se', '--add-exports', 'java.base/jdk.internal.ref=ALL-UNNAMED',
  ...['java.base/java.lang', 'java.base/sun.nio.ch', 'java.management/sun.management',
    'jdk.management/com.sun.management.internal'].flatMap((p) => ['--add-opens', `${p}=ALL-UNNAMED`]),
  '-Dhazelcast.phone.home.enabled=false',
  '-Dhazelcast.wait.seconds.before.join=0',
  '-Dhazelcast.shutdownhook.policy=GRACEFUL',
  '-Dhazelcast.logging.type=jdk',
  // Listen on loopback only and advertise 127.0.0.1 rather than whatever
  // interface Hazelcast would pick; clients connect to advertised addresses.
  '-Dhazelcast.socket.bind.any=false',
  '-Dhazelcast.local.localAddress=127.0.0.1',
  // Extra JVM flags, last so they win: the benchmark asks for full JIT and G1 instead of fast startup.
  ...(process.env.GATEKEEPER_HZ_JVM_FLAGS ?? '').split(/\s+/).filter(Boolean),
];

const downloads = new Map(); // jar path -> in-flight download

/**
 * Returns the absolute path of `hazelcast-<version>.jar`, downloading it with
 * `mvn dependency:copy` (no pom needed) if it is not cached yet. Safe to call
 * concurrently: the jar is copied under a temporary name and renamed into place.
 * @param {{ cacheDir?: string }} [options] defaults to `<repo>/.cache/hazelcast`
 * @returns {Promise<string>}
 */
export async function ensureJar({ cacheDir = join(REPO_ROOT, '.cache', 'hazelcast') } = {}) {
  const jarPath = resolve(cacheDir, `hazelcast-${HAZELCAST_VERSION}.jar`);
  const size = await stat(jarPath).then((s) => s.size, () => 0);
  if (size > 1024 * 1024) return jarPath;
  // One download per jar per process; other processes are covered by the rename.
  if (!downloads.has(jarPath)) {
    downloads.set(jarPath, download(cacheDir, jarPath).finally(() => downloads.delete(jarPath)));
  }
  return downloads.get(jarPath);
}

async function download(cacheDir, jarPath) {
  await mkdir(cacheDir, { recursive: true });
  // Same directory as the target, so the rename below cannot cross filesystems.
  const tmp = await mkdtemp(join(cacheDir, '.download-'));
  try {
    const args = ['-B', '-q', '-Dstyle.color=never', 'dependency:copy',
      `-Dartifact=com.hazelcast:hazelcast:${HAZELCAST_VERSION}`, `-DoutputDirectory=${tmp}`];
    const child = spawn('mvn', args, { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    // 'error' (e.g. ENOENT: no mvn on PATH) rejects; report it like a failed run.
    const code = await once(child, 'close').then(([c]) => c, (err) => { output += err.message; return err.code; });
    if (code !== 0) {
      // With -q Maven prints only errors, and the first ones say what went wrong
      // (the rest is generic advice), so show those rather than the tail.
      const lines = stripVTControlCharacters(output).split('\n').filter((l) => !/^(\[ERROR\])?\s*$/.test(l));
      throw new Error(`Could not fetch Hazelcast ${HAZELCAST_VERSION}: "mvn ${args.join(' ')}" failed (${code}). `
        + `Check that Maven and a JDK are installed and Maven Central is reachable.\n${lines.slice(0, 4).join('\n')}`);
    }
    await rename(join(tmp, basename(jarPath)), jarPath);
    return jarPath;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

// Members still running, killed if this process exits without stopping them
// (process.exit(), uncaught error) so no JVMs are left behind.
const liveMembers = new Map(); // child process -> its temp config dir
process.on('exit', () => {
  for (const [child, configDir] of liveMembers) {
    child.kill('SIGKILL');
    rmSync(configDir, { recursive: true, force: true });
  }
});

function memberYaml(clusterName, port, memberPorts, client, config) {
  // JSON strings are valid YAML (flow) scalars and sequences: no quoting bugs.
  const members = JSON.stringify(memberPorts.map((p) => `${HOST}:${p}`));
  // Hazelcast's own import merges the caller's file (maps, split-brain protection) with the network set here.
  const imports = config ? `\n  import: ${JSON.stringify([config])}` : '';
  // connection-timeout-seconds: members starting together ask each other for a
  // master this long before one claims mastership; the default 5 s makes a
  // 2-member start take ~8 s instead of ~4 s.
  const join = `join:
      auto-detection: { enabled: false }
      multicast: { enabled: false }
      tcp-ip: { enabled: true, connection-timeout-seconds: 1, member-list: ${members} }`;
  if (!client) {
    return `hazelcast:
  cluster-name: ${JSON.stringify(clusterName)}${imports}
  network:
    port: { port: ${port}, auto-increment: false }
    ${join}
`;
  }
  // Advanced network: members talk to each other directly on `port`, clients on their own port, and
  // the member advertises `client.publicAddress` to clients (smart clients connect to advertised
  // addresses), so a fault test can put a proxy in front of each member's client traffic only.
  return `hazelcast:
  cluster-name: ${JSON.stringify(clusterName)}${imports}
  advanced-network:
    enabled: true
    ${join}
    member-server-socket-endpoint-config:
      port: { port: ${port}, auto-increment: false }
    client-server-socket-endpoint-config:
      public-address: ${JSON.stringify(client.publicAddress)}
      port: { port: ${client.port}, auto-increment: false }
`;
}

/**
 * @typedef {object} MemberHandle
 * @property {number} port the member-to-member port (and the client port, unless `clientPort` was given)
 * @property {string} address `127.0.0.1:<port>` where clients reach it (`clientPort` if given)
 * @property {number} pid
 * @property {import('node:child_process').ChildProcess} process
 * @property {(timeoutMs?: number) => Promise<number|null>} stop SIGCONT (in case it was frozen)
 *   and SIGTERM (graceful shutdown hook), SIGKILL after `timeoutMs` (default 15000); resolves to the exit code
 * @property {(signal?: NodeJS.Signals) => Promise<number|null>} kill sends `signal`
 *   (default SIGKILL, i.e. a crash) and resolves once the process is gone
 * @property {Promise<number|null>} exited exit code (143 after a graceful SIGTERM stop),
 *   `null` if killed by a signal the JVM does not handle (SIGKILL)
 */

/**
 * Starts one Hazelcast member JVM on 127.0.0.1:`port` with TCP/IP join to
 * `memberPorts` (default `[port]`). Does not wait until the member is ready;
 * use waitForCluster() for that.
 * @param {{ clusterName: string, port: number, memberPorts?: number[], logFile?: string,
 *   heap?: string, jarPath?: string, clientPort?: number, clientPublicAddress?: string, config?: string }} options
 *   `config` is a member configuration file (YAML or XML, a `hazelcast:` document: maps, split-brain protection)
 *   that the member imports next to the cluster name and network set here;
 *   `logFile` gets stdout/stderr appended (discarded if omitted); `jarPath` defaults to ensureJar();
 *   `clientPort` + `clientPublicAddress` switch on the advanced network: clients connect to
 *   `clientPort` and are told the member is at `clientPublicAddress` (a proxy, say);
 *   `detached` runs the JVM in a process group of its own, so a Ctrl-C in the terminal (SIGINT to the
 *   whole foreground group) reaches only the caller, which then stops the member when it is ready to
 * @returns {Promise<MemberHandle>}
 */
export async function startMember({ clusterName, port, memberPorts = [port], logFile, heap = '512m', jarPath, clientPort, clientPublicAddress, detached = false, config }) {
  if (!clusterName || !Number.isInteger(port)) throw new TypeError('startMember needs clusterName and an integer port');
  if ((clientPort === undefined) !== (clientPublicAddress === undefined)) {
    throw new TypeError('startMember needs both clientPort and clientPublicAddress, or neither');
  }
  jarPath ??= await ensureJar();
  const configDir = await mkdtemp(join(tmpdir(), 'gatekeeper-hz-'));
  const configFile = join(configDir, 'hazelcast.yaml');
  const client = clientPort === undefined ? undefined : { port: clientPort, publicAddress: clientPublicAddress };
  await writeFile(configFile, memberYaml(clusterName, port, memberPorts, client, config && resolve(config)));

  let out = 'ignore';
  if (logFile) {
    await mkdir(dirname(logFile), { recursive: true });
    out = openSync(logFile, 'a');
    writeSync(out, `\n==== ${new Date().toISOString()} starting member ${HOST}:${port} (${clusterName})\n`);
  }
  let child;
  try {
    child = spawn(JAVA, [`-Xmx${heap}`, ...JVM_FLAGS, `-Dhazelcast.config=${configFile}`, '-cp', jarPath, MAIN_CLASS],
      { stdio: ['ignore', out, out], detached });
  } finally {
    if (typeof out === 'number') closeSync(out); // the child holds its own copy
  }
  // Resolve only after cleanup, so a caller that exits right after stop()
  // leaves no temp dir behind.
  const exited = new Promise((res) => child.once('exit', (code) => {
    liveMembers.delete(child);
    rm(configDir, { recursive: true, force: true }).catch(() => {}).then(() => res(code));
  }));
  try {
    await once(child, 'spawn'); // rejects with ENOENT if java is missing
  } catch (err) {
    await rm(configDir, { recursive: true, force: true });
    throw new Error(`Could not start "${JAVA}" for a Hazelcast member (is a JDK on PATH?): ${err.message}`, { cause: err });
  }
  liveMembers.set(child, configDir);

  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    port,
    address: `${HOST}:${clientPort ?? port}`,
    pid: child.pid,
    process: child,
    exited,
    async stop(timeoutMs = 15_000) {
      if (!running()) return exited;
      child.kill('SIGCONT'); // a frozen (SIGSTOPped) JVM cannot run its shutdown hook
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try { return await exited; } finally { clearTimeout(timer); }
    },
    async kill(signal = 'SIGKILL') {
      if (running()) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Polls the cluster with short-lived clients until it reports at least `count`
 * members. Connection failures are retried until the deadline.
 * @param {{ clusterName: string, addresses: string[], count: number, timeoutMs?: number,
 *   signal?: AbortSignal }} options `signal` aborts the wait early
 * @returns {Promise<number>} the member count seen
 */
export async function waitForCluster({ clusterName, addresses, count, timeoutMs = 60_000, signal }) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  let seen = 0;
  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    let client;
    try {
      client = await Client.newHazelcastClient({
        clusterName,
        // One connection is enough to read the member list. A smart client would also connect to every address
        // the members advertise, which may be a proxy not forwarding yet; and a connection closed during its
        // authentication stalls the client's start for the heartbeat timeout (60 s, Node client 5.6).
        network: { clusterMembers: addresses, smartRouting: false },
        connectionStrategy: {
          connectionRetry: {
            clusterConnectTimeoutMillis: Math.max(500, Math.min(2000, deadline - Date.now())),
            initialBackoffMillis: 200,
            maxBackoffMillis: 500,
          },
        },
        properties: { 'hazelcast.logging.level': 'OFF' },
      });
      // One connection can watch the member list grow; reconnect only if it drops.
      while (Date.now() < deadline && !signal?.aborted && client.getLifecycleService().isRunning()) {
        seen = client.getCluster().getMembers().length;
        if (seen >= count) return seen;
        await sleep(200);
      }
    } catch (err) {
      lastError = err;
    } finally {
      await client?.shutdown().catch(() => {});
    }
    await sleep(Math.min(250, Math.max(0, deadline - Date.now())));
  }
  throw new Error(`Hazelcast cluster "${clusterName}" at ${addresses.join(', ')} did not reach ${count} member(s) `
    + `within ${timeoutMs} ms (last saw ${seen})${lastError ? `; last error: ${lastError.message}` : ''}`,
  { cause: lastError });
}


// Last lines of a member log without Java stack frames, which crowd out the
// "Caused by: ..." lines that explain a failed start.
async function logTail(file, lines = 12) {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').filter((l) => !/^\s+(at |\.\.\. \d+ more)/.test(l))
    .slice(-lines).map((l) => `    ${l}`).join('\n');
}

/**
 * Starts `members` members concurrently and waits until all have joined.
 * Without `logDir`, member logs go to a temp dir that stop() deletes, but that
 * is kept (and named in the error) when startup fails.
 * @param {{ members?: number, clusterName?: string, ports?: number[], logDir?: string,
 *   heap?: string, clientPublicAddresses?: string[], detached?: boolean, config?: string }} [options] `config` is
 *   imported by every member (see startMember); `members` defaults to
 *   `ports.length` or 1; `clientPublicAddresses` (one per member) gives every member a client
 *   port of its own (advanced network) that advertises that address to clients; `detached` keeps
 *   the terminal's Ctrl-C from the members (see startMember)
 * @returns {Promise<{ clusterName: string, addresses: string[], members: MemberHandle[],
 *   stop(): Promise<void>, restartMember(i: number): Promise<MemberHandle> }>} `addresses`
 *   are where clients reach the members directly (their client ports)
 */
export async function startCluster({ members: size, clusterName, ports, logDir, heap, clientPublicAddresses, detached, config } = {}) {
  size ??= ports?.length ?? clientPublicAddresses?.length ?? 1;
  if (ports && ports.length !== size) throw new TypeError(`got ${ports.length} ports for ${size} members`);
  if (clientPublicAddresses && clientPublicAddresses.length !== size) {
    throw new TypeError(`got ${clientPublicAddresses.length} client public addresses for ${size} members`);
  }
  clusterName ??= `gatekeeper-${Math.random().toString(36).slice(2, 10)}`;
  const jarPath = await ensureJar();
  // Client ports are picked together with member ports, so all of them differ.
  const picked = await freePorts((ports ? 0 : size) + (clientPublicAddresses ? size : 0));
  ports ??= picked.splice(0, size);
  const clientPorts = clientPublicAddresses ? picked : undefined;
  const ownLogDir = !logDir;
  logDir = logDir ? resolve(logDir) : await mkdtemp(join(tmpdir(), 'gatekeeper-hz-logs-'));
  const logFile = (port) => join(logDir, `member-${port}.log`);
  const addresses = (clientPorts ?? ports).map((p) => `${HOST}:${p}`);
  const launch = (i) => startMember({
    clusterName, port: ports[i], memberPorts: ports, logFile: logFile(ports[i]), heap, jarPath,
    clientPort: clientPorts?.[i], clientPublicAddress: clientPublicAddresses?.[i], detached, config,
  });

  // Wait for the full count, but give up as soon as one of `handles` exits.
  async function awaitMembers(handles, probeAddresses) {
    const aborter = new AbortController();
    const firstExit = Promise.race(handles.map((m) => m.exited.then((code) => ({ m, code }))));
    const result = await Promise.race([
      waitForCluster({ clusterName, addresses: probeAddresses, count: size, signal: aborter.signal }).then(() => null),
      firstExit,
    ]).finally(() => aborter.abort());
    if (result) {
      throw new Error(`member ${result.m.address} exited early (code ${result.code}); `
        + `log ${logFile(result.m.port)} ends with:\n${await logTail(logFile(result.m.port))}`);
    }
  }

  const started = await Promise.allSettled(ports.map((_, i) => launch(i)));
  const handles = started.filter((r) => r.status === 'fulfilled').map((r) => r.value);
  try {
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    await awaitMembers(handles, addresses);
  } catch (err) {
    await Promise.all(handles.map((m) => m.stop()));
    throw new Error(`Hazelcast cluster "${clusterName}" failed to start: ${err.message}\n`
      + `Member logs: ${ports.map(logFile).join(', ')}`, { cause: err });
  }

  let stopped = false;
  return {
    clusterName,
    addresses,
    members: handles,
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all(handles.map((m) => m.stop()));
      if (ownLogDir) await rm(logDir, { recursive: true, force: true });
    },
    async restartMember(i) {
      const old = handles[i];
      if (!old) throw new RangeError(`no member ${i} (cluster has ${handles.length})`);
      await old.stop(); // no-op if it was already stopped or killed
      handles[i] = await launch(i);
      // Probe via the restarted member only: the survivors may still list the
      // dead member, so their count could reach `size` before the new one joins.
      await awaitMembers([handles[i]], [handles[i].address]);
      return handles[i];
    },
  };
}

/**
 * The existing cluster named by env GATEKEEPER_HZ_MEMBERS (comma-separated
 * host:port) and GATEKEEPER_HZ_CLUSTER_NAME (default 'dev'), or `undefined`.
 * @returns {{ clusterName: string, addresses: string[] } | undefined}
 */
export function clusterFromEnv() {
  const addresses = (process.env.GATEKEEPER_HZ_MEMBERS ?? '').split(',').map((a) => a.trim()).filter(Boolean);
  if (addresses.length === 0) return undefined;
  return { clusterName: process.env.GATEKEEPER_HZ_CLUSTER_NAME || 'dev', addresses };
}

const USAGE = `Usage: node scripts/hazelcast.mjs <command> [options]

Commands:
  fetch    download hazelcast-${HAZELCAST_VERSION}.jar with mvn (if needed) and print its path
  start    run a new local cluster (declared new: no recovery wait) in the foreground until Ctrl-C

Options for start:
  -n, --members N          number of members (default 1)
  -p, --port P             ports P, P+1, ... (default 5701)
      --cluster-name NAME  cluster name (default dev)
      --log-dir DIR        write member-<port>.log files to DIR
      --config FILE        member configuration every member imports (maps, split-brain
                           protection), e.g. docs/hazelcast/gatekeeper-maps.yaml
  -h, --help               show this help
`;

function positiveInt(value, flag) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${flag} must be a positive integer, got "${value}"`);
  return n;
}

function parseCli(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      members: { type: 'string', short: 'n', default: '1' },
      port: { type: 'string', short: 'p', default: '5701' },
      'cluster-name': { type: 'string', default: 'dev' },
      'log-dir': { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { command: 'help' };
  const [command, ...extra] = positionals;
  if (!['fetch', 'start'].includes(command)) throw new Error(command ? `unknown command "${command}"` : 'missing command');
  if (extra.length) throw new Error(`unexpected argument "${extra[0]}"`);
  const members = positiveInt(values.members, '--members');
  const port = positiveInt(values.port, '--port');
  const ports = Array.from({ length: members }, (_, i) => port + i);
  if (values.config !== undefined && !existsSync(values.config)) throw new Error(`--config: no file "${values.config}"`);
  return { command, cluster: { ports, clusterName: values['cluster-name'], logDir: values['log-dir'], config: values.config } };
}

async function main(argv) {
  let options;
  try {
    options = parseCli(argv);
  } catch (err) {
    process.stderr.write(`${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (options.command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (options.command === 'fetch') {
    console.log(await ensureJar());
    return 0;
  }

  // Listen for signals before starting, so Ctrl-C during startup still stops
  // the members (the process 'exit' hook does not run when a signal kills us).
  let stopping = false;
  const stopRequested = new Promise((res) => {
    const onSignal = (signal) => {
      if (stopping) { // second Ctrl-C: don't wait for graceful shutdown
        console.error('Killing members.');
        for (const child of liveMembers.keys()) child.kill('SIGKILL');
        return;
      }
      stopping = true;
      console.error(`${signal}: stopping members...`);
      res();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });

  const cluster = await startCluster(options.cluster);
  // These members were started just now and have never granted anything: declare them new, so the first grants
  // on them need no recovery wait (see scripts/fresh-cluster.mjs).
  if (!stopping) await declareFreshCluster(cluster);
  if (!stopping) { // else a signal came during startup: don't announce a cluster that is going away
    cluster.members.forEach((m, i) => {
      console.log(`member ${i + 1}: ${m.address} (pid ${m.pid})`);
      m.exited.then((code) => { if (!stopping) console.error(`member ${m.address} exited unexpectedly (code ${code})`); });
    });
    console.log(`export GATEKEEPER_HZ_MEMBERS=${cluster.addresses.join(',')}`);
    console.log(`export GATEKEEPER_HZ_CLUSTER_NAME=${cluster.clusterName}`);
    console.error('Cluster is up; press Ctrl-C to stop.');
  }
  await stopRequested;
  await cluster.stop();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => { console.error(err.message); process.exit(1); },
  );
}

export { freePorts };
