#!/usr/bin/env node
// Runs the sample app as three instances on three ports against one Hazelcast cluster:
//
//   npm run sample                          # starts a local member on 5701 (cluster "dev"), then the instances
//   GATEKEEPER_HZ_MEMBERS=10.0.0.5:5701 npm run sample   # attaches to an existing cluster instead
//
// Ctrl-C stops the instances gracefully (they release their permits), then the member it started.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import { clusterFromEnv, startCluster } from './hazelcast.mjs';
import { declareFreshCluster } from './fresh-cluster.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'sample-app', 'src', 'main.ts');
const COLORS = ['\x1b[36m', '\x1b[33m', '\x1b[35m'];
const RESET = '\x1b[0m';

const USAGE = `Usage: npm run sample -- [--ports 3000,3001,3002] [--groups production,production,dr-site] [--hz-port 5701]

Starts a local Hazelcast member (unless GATEKEEPER_HZ_MEMBERS names a cluster to attach to), then three sample
instances, one per port, with identities app-<port> in the given groups. Ctrl-C stops everything cleanly.
`;

function parse() {
  const { values } = parseArgs({
    options: {
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
  return { ports, groups, hzPort: Number(values['hz-port']) };
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
  const { ports, groups, hzPort } = parse();
  let cluster = clusterFromEnv();
  // Check before starting anything, so a busy port never leaves two instances running and a third failed.
  const busy = await busyPorts(ports);
  if (busy.length > 0) {
    throw new Error(`port ${busy.join(', ')} ${busy.length > 1 ? 'are' : 'is'} already in use (another \`npm run sample\`?); ` +
      `pick free ones: npm run sample -- --ports 4000,4001,4002`);
  }
  if (!cluster && (await busyPorts([hzPort])).length > 0) {
    throw new Error(`port ${hzPort} is already in use: if a Hazelcast member runs there, attach to it with ` +
      `GATEKEEPER_HZ_MEMBERS=127.0.0.1:${hzPort} npm run sample; else pick another port with --hz-port`);
  }
  let owned;
  if (cluster) {
    console.log(`Attaching to cluster "${cluster.clusterName}" at ${cluster.addresses.join(', ')}`);
  } else {
    console.log(`Starting a Hazelcast member on 127.0.0.1:${hzPort} (cluster "dev")...`);
    owned = await startCluster({ members: 1, clusterName: 'dev', ports: [hzPort], logDir: join(ROOT, '.cache', 'sample-logs') });
    cluster = { clusterName: owned.clusterName, addresses: owned.addresses };
    // A member this script just started has never granted anything: its first grants need no recovery wait.
    await declareFreshCluster(cluster);
  }

  const instances = ports.map((port, i) => {
    const name = `app-${port}`;
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', MAIN], {
      cwd: ROOT,
      env: {
        ...process.env,
        TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
        PORT: String(port),
        SAMPLE_ACQUIRER: name,
        SAMPLE_GROUP: groups[i],
        // One instance prints the cluster's state every 30 s; the same lines from all three would only repeat it.
        SAMPLE_STATE_DUMP: process.env.SAMPLE_STATE_DUMP ?? (i === 0 ? '30s' : 'off'),
        GATEKEEPER_HZ_MEMBERS: cluster.addresses.join(','),
        GATEKEEPER_HZ_CLUSTER_NAME: cluster.clusterName,
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
  Console: http://127.0.0.1:${ports[0]}/gatekeeper/console  (token: sample-admin-token-change-me)
  curl -s http://127.0.0.1:${ports[0]}/status
  curl -s -X POST http://127.0.0.1:${ports[0]}/reindex
  curl -s -H 'Authorization: Bearer sample-admin-token-change-me' http://127.0.0.1:${ports[0]}/gatekeeper/permits
  npx nestjs-gatekeeper pause billing          (then: resume billing)
  npx nestjs-gatekeeper migrate --from-group production --to-group dr-site
Press Ctrl-C to stop everything.
`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('Stopping the instances (they release their permits)...');
    await Promise.all(instances.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    }));
    if (owned) {
      console.log('Stopping the Hazelcast member...');
      await owned.stop();
    }
    console.log('Stopped.');
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error) => {
  console.error(`sample: ${error.message}`);
  process.exit(1);
});
