// A Hazelcast cluster under a test's control, run as a child process (jest's CommonJS tests cannot import the
// ESM member script). Reads one command per line on stdin and answers one JSON line per command on stdout:
//   kill <i> | stop <i> | restart <i> | stopall | startall | quit
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startCluster } from '../../scripts/hazelcast.mjs';

const { values } = parseArgs({ options: { members: { type: 'string', default: '1' }, 'log-dir': { type: 'string' } } });
const cluster = await startCluster({ members: Number(values.members), logDir: values['log-dir'] });
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
say({ ok: true, cmd: 'start', clusterName: cluster.clusterName, addresses: cluster.addresses, pids: cluster.members.map((m) => m.pid) });

const commands = {
  kill: async (i) => cluster.members[i].kill('SIGKILL'),
  stop: async (i) => cluster.members[i].stop(),
  restart: async (i) => {
    cluster.members[i] = await cluster.restartMember(i);
  },
  stopall: async () => Promise.all(cluster.members.map((m) => m.stop())),
  startall: async () => {
    const restarted = await Promise.all(cluster.members.map((_, i) => cluster.restartMember(i)));
    restarted.forEach((m, i) => (cluster.members[i] = m));
  },
  quit: async () => {
    await cluster.stop();
    say({ ok: true, cmd: 'quit' });
    process.exit(0);
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, arg] = line.trim().split(/\s+/);
  try {
    if (!commands[cmd]) throw new Error(`unknown command ${cmd}`);
    await commands[cmd](Number(arg));
    say({ ok: true, cmd, pids: cluster.members.map((m) => m.pid) });
  } catch (error) {
    say({ ok: false, cmd, error: String(error?.message ?? error) });
  }
}
await cluster.stop();
