#!/usr/bin/env node
// Runs the sample app as three instances on three ports against one Hazelcast cluster, one PostgreSQL database, or
// one Redis server:
//
//   npm run sample                          # starts a local member on 5701 (cluster "dev"), then the instances
//   GATEKEEPER_HZ_MEMBERS=10.0.0.5:5701 npm run sample   # attaches to an existing cluster instead
//   npm run sample -- --backend postgres    # starts a throwaway PostgreSQL (scripts/postgres.mjs) instead
//   GATEKEEPER_PG_URL=postgres://... npm run sample -- --backend postgres   # uses that database
//   npm run sample -- --backend redis       # starts a throwaway redis-server (scripts/redis.mjs) instead
//   GATEKEEPER_REDIS_URL=redis://... npm run sample -- --backend redis     # uses that server
//
// Ctrl-C stops the instances gracefully (they release their permits), then the member (or Redis server) it started
// (which runs in a process group of its own, so the terminal's Ctrl-C does not stop it first).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import { clusterFromEnv, startCluster } from './hazelcast.mjs';
import { declareFreshCluster } from './fresh-cluster.mjs';
import { startPostgres } from './postgres.mjs';
import { startRedis } from './redis.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'sample-app', 'src', 'main.ts');
const COLORS = ['\x1b[36m', '\x1b[33m', '\x1b[35m'];
const RESET = '\x1b[0m';

const USAGE = `Usage: npm run sample -- [--backend hazelcast|postgres|redis] [--ports 3000,3001,3002] [--groups production,production,dr-site] [--hz-port 5701]

Starts a local Hazelcast member on 127.0.0.1:<hz-port> (unless GATEKEEPER_HZ_MEMBERS names a cluster to attach
to), then three sample instances, one per port, with identities app-<port> in the given groups. Ctrl-C stops the
instances (they release their permits), then the member. With --backend postgres (or GATEKEEPER_BACKEND=postgres)
the state is in PostgreSQL instead: the database GATEKEEPER_PG_URL names, else a throwaway local server (Debian's
postgresql package; its data goes when it stops). With --backend redis (or GATEKEEPER_BACKEND=redis), in Redis: the
server GATEKEEPER_REDIS_URL names, else a throwaway local redis-server (with its AOF; its data goes when it stops),
whose key prefix is declared new before the instances start, so their first grants need no recovery wait.
`;

function parse() {
  const { values } = parseArgs({
    options: {
      backend: { type: 'string', default: process.env.GATEKEEPER_BACKEND || 'hazelcast' },
      ports: { type: 'string', default: '3000,3001,3002' },
      groups: { type: 'string', default: 'production,production,dr-site' },
      'hz-port': { type: 'string', default: '5701' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const ports = values.ports.split(',').map(Number);
  const groups = values.groups.split(',');
  if (ports.some((p) => !Number.isInteger(p) || p <= 0) || groups.length !== ports.length) {
    throw new Error(`--ports must be port numbers and --groups must name one group per port (${USAGE})`);
  }
  const hzPort = Number(values['hz-port']);
  if (!Number.isInteger(hzPort) || hzPort <= 0 || hzPort > 65535) throw new Error(`--hz-port must be a port number, got "${values['hz-port']}"`);
  if (!['hazelcast', 'postgres', 'redis'].includes(values.backend)) throw new Error(`--backend must be hazelcast, postgres or redis, got "${values.backend}"`);
  return { ports, groups, hzPort, backend: values.backend };
}

/** Prefixes every line of a stream with the instance's name, so the three logs can share one terminal. */
function pipeWithPrefix(stream, prefix, out) {
  let pending = '';
  stream.on('data', (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop();
    for (const line of lines) out.write(`${prefix} ${line}\n`);
  });
  stream.on('end', () => pending && out.write(`${prefix} ${pending}\n`));
}

/** Resolves to the ports among `ports` that something on this machine already listens on. */
async function busyPorts(ports) {
  const busy = [];
  for (const port of ports) {
    const server = createServer();
    const free = await new Promise((res) => {
      server.once('error', () => res(false));
      server.listen(port, '0.0.0.0', () => server.close(() => res(true)));
    });
    if (!free) busy.push(port);
  }
  return busy;
}

async function main() {
  const { ports, groups, hzPort, backend } = parse();
  const onPostgres = backend === 'postgres';
  const onRedis = backend === 'redis';
  let cluster = backend === 'hazelcast' ? clusterFromEnv() : undefined;
  let postgresUrl = onPostgres ? process.env.GATEKEEPER_PG_URL || undefined : undefined;
  let redisUrl = onRedis ? process.env.GATEKEEPER_REDIS_URL || undefined : undefined;
  // Check before starting anything, so a busy port never leaves two instances running and a third failed.
  const busy = await busyPorts(ports);
  if (busy.length > 0) {
    throw new Error(`port ${busy.join(', ')} ${busy.length > 1 ? 'are' : 'is'} already in use (another \`npm run sample\`?); ` +
      `pick free ones: npm run sample -- --ports 4000,4001,4002`);
  }
  if (backend === 'hazelcast' && !cluster && (await busyPorts([hzPort])).length > 0) {
    throw new Error(`port ${hzPort} is already in use: if a Hazelcast member runs there, attach to it with ` +
      `GATEKEEPER_HZ_MEMBERS=127.0.0.1:${hzPort} npm run sample; else pick another port with --hz-port`);
  }
  let owned;
  let instances = [];
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('Stopping the instances (they release their permits)...');
    await Promise.all(instances.map(({ name, child }) => stopInstance(name, child)));
    if (owned) {
      console.log(onPostgres ? 'Stopping PostgreSQL...' : onRedis ? 'Stopping Redis...' : 'Stopping the Hazelcast member...');
      await owned.stop();
    }
    console.log('Stopped.');
    // A member (or Redis server) still starting is killed by scripts/hazelcast.mjs's (scripts/redis.mjs's) exit hook.
    process.exit(0);
  };
  // Listening from before the member starts, so a Ctrl-C during start-up stops it too (it runs in a group of its
  // own); SIGHUP as well (the terminal closed), or the member would outlive us.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, stop);

  if (onPostgres) {
    if (postgresUrl) {
      console.log(`Using PostgreSQL at ${redacted(postgresUrl)}`);
    } else {
      console.log('Starting a throwaway PostgreSQL...');
      owned = await startPostgres({ durable: true });
      postgresUrl = owned.url;
      console.log(`PostgreSQL at ${postgresUrl}`);
    }
  } else if (onRedis) {
    if (redisUrl) {
      // A server someone else runs: the prefix may have held permits, so it is not declared new here (that would cut
      // the recovery wait that keeps two holders apart); on a prefix nobody used, `store init` does it.
      console.log(`Using Redis at ${redacted(redisUrl)}; on a prefix no node used yet, first grants wait one permit duration ` +
        `unless it was declared new (${cliHint(undefined, undefined, redisUrl)} store init)`);
    } else {
      console.log('Starting a throwaway Redis (with its AOF)...');
      // Detached, as the Hazelcast member: the terminal's Ctrl-C must not stop it while the instances release their permits.
      owned = await startRedis({ detached: true });
      redisUrl = owned.url;
      console.log(`Redis at ${redisUrl}`);
      // A server this script just started has never granted anything: its first grants need no recovery wait.
      await declareFreshRedis(redisUrl);
    }
  } else if (cluster) {
    console.log(`Attaching to cluster "${cluster.clusterName}" at ${cluster.addresses.join(', ')}`);
  } else {
    console.log(`Starting a Hazelcast member on 127.0.0.1:${hzPort} (cluster "dev")...`);
    // Detached: a Ctrl-C in the terminal goes to every process of the foreground group, and a member that got it
    // would shut down while the instances still release their permits through it. This script stops it last.
    owned = await startCluster({ members: 1, clusterName: 'dev', ports: [hzPort], logDir: join(ROOT, '.cache', 'sample-logs'), detached: true });
    cluster = { clusterName: owned.clusterName, addresses: owned.addresses };
    // A member this script just started has never granted anything: its first grants need no recovery wait.
    await declareFreshCluster(cluster);
  }

  if (stopping) return;
  instances = ports.map((port, i) => {
    const name = `app-${port}`;
    const child = spawn(process.execPath, ['-r', join(ROOT, 'scripts', 'ts-register.cjs'), MAIN], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        SAMPLE_ACQUIRER: name,
        SAMPLE_GROUP: groups[i],
        // One instance prints the cluster's state every 30 s; the same lines from all three would only repeat it.
        SAMPLE_STATE_DUMP: process.env.SAMPLE_STATE_DUMP ?? (i === 0 ? '30s' : 'off'),
        ...(onPostgres
          ? { SAMPLE_BACKEND: 'postgres', GATEKEEPER_PG_URL: postgresUrl }
          : onRedis
            ? { SAMPLE_BACKEND: 'redis', GATEKEEPER_REDIS_URL: redisUrl }
            : { GATEKEEPER_HZ_MEMBERS: cluster.addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: cluster.clusterName }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const prefix = `${COLORS[i % COLORS.length]}[${name}]${RESET}`;
    pipeWithPrefix(child.stdout, prefix, process.stdout);
    pipeWithPrefix(child.stderr, prefix, process.stderr);
    console.log(`instance ${name} (group ${groups[i]}) pid ${child.pid} on http://127.0.0.1:${port}`);
    child.on('exit', (code, signal) => {
      if (!stopping) console.log(`instance ${name} exited (${signal ?? `code ${code}`}); the others carry on`);
    });
    return { name, child };
  });

  console.log(`
Watch the "ran <job> on <node>" lines: billing runs on one instance per tick, reports on two, dr-check only on
the dr-site instance, export (release mode) on one at a time.
  Console: http://127.0.0.1:${ports[0]}/gatekeeper/console  (token: ${adminTokenShown()})
  curl -s http://127.0.0.1:${ports[0]}/status
  curl -s http://127.0.0.1:${ports[0]}/health/ready
  curl -s http://127.0.0.1:${ports[0]}/metrics
  curl -s -X POST http://127.0.0.1:${ports[0]}/reindex
  curl -s -H "Authorization: Bearer ${process.env.GATEKEEPER_ADMIN_TOKEN ? '$GATEKEEPER_ADMIN_TOKEN' : SAMPLE_ADMIN_TOKEN}" http://127.0.0.1:${ports[0]}/gatekeeper/permits
  ${cliHint(cluster, postgresUrl, redisUrl)} pause billing          (then: resume billing)
  ${adminTokenHint()}${cliHint(cluster, postgresUrl, redisUrl)} jobs describe BillingJob.charge   (asks a live instance)
  ${cliHint(cluster, postgresUrl, redisUrl)} migrate --from-group production --to-group dr-site
Press Ctrl-C to stop everything.
`);
}

/** How long an instance gets to release its permits and exit before it is killed (its permits then expire). */
const INSTANCE_STOP_MS = 20_000;

/**
 * Asks an instance to shut down (it releases its permits) and resolves once it exited, killing it after
 * INSTANCE_STOP_MS. A Ctrl-C has already reached it (same process group); Nest ignores the second signal.
 */
async function stopInstance(name, child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    console.log(`instance ${name} did not stop within ${INSTANCE_STOP_MS / 1000} s; killing it (its permits will expire)`);
    child.kill('SIGKILL');
  }, INSTANCE_STOP_MS);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Declares the sample's key prefix new on the Redis server this script just started (the library's
 * RedisBackend.declareFresh(), as `nestjs-gatekeeper --backend redis store init` does), so the instances' first grants need no
 * recovery wait. From the built package (`npm run sample` builds it), as the instances load it.
 */
async function declareFreshRedis(url) {
  const { RedisBackend } = createRequire(import.meta.url)('nestjs-gatekeeper');
  const backend = new RedisBackend({ url, mapPrefix: process.env.SAMPLE_MAP_PREFIX ?? 'gatekeeper' });
  if (await backend.declareFresh()) console.log(`Declared prefix "${backend.mapPrefix}" new: the first ticks run at once`);
}

/** The instances' admin token when GATEKEEPER_ADMIN_TOKEN does not set one (sample-app/src/sample.config.ts). */
const SAMPLE_ADMIN_TOKEN = 'sample-admin-token-change-me';

/** The admin token as the hints show it: the sample's default, or the variable the user set (not echoed). */
function adminTokenShown() {
  return process.env.GATEKEEPER_ADMIN_TOKEN ? 'your GATEKEEPER_ADMIN_TOKEN' : SAMPLE_ADMIN_TOKEN;
}

/**
 * What a CLI command that asks a live instance needs before it: the token the instances took, unless the user's own
 * GATEKEEPER_ADMIN_TOKEN (which the instances and the CLI both read) is already set.
 */
function adminTokenHint() {
  return process.env.GATEKEEPER_ADMIN_TOKEN ? '' : `GATEKEEPER_ADMIN_TOKEN=${SAMPLE_ADMIN_TOKEN} `;
}

/**
 * The CLI command line that reaches this cluster (its defaults, 127.0.0.1:5701 and cluster dev, need no flags), or
 * this database, or this Redis server.
 */
function cliHint(cluster, postgresUrl, redisUrl) {
  const flags = [];
  if (postgresUrl) {
    flags.push(`--backend postgres --pg-url ${redacted(postgresUrl)}`);
  } else if (redisUrl) {
    flags.push(`--backend redis --redis-url ${redacted(redisUrl)}`);
  } else {
    const { clusterName, addresses } = cluster;
    if (addresses.join(',') !== '127.0.0.1:5701') flags.push(`--members ${addresses.join(',')}`);
    if (clusterName !== 'dev') flags.push(`--cluster-name ${clusterName}`);
  }
  const mapPrefix = process.env.SAMPLE_MAP_PREFIX;
  if (mapPrefix && mapPrefix !== 'gatekeeper') flags.push(`--map-prefix ${mapPrefix}`);
  return ['npx nestjs-gatekeeper', ...flags].join(' ');
}

/** A connection string without its password, for the terminal. */
function redacted(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

main().catch((error) => {
  console.error(`sample: ${error.message}`);
  process.exit(1);
});
