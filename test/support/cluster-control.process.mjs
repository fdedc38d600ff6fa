// A Hazelcast cluster under a test's control, run as a child process (jest's CommonJS tests cannot import the
// ESM member script). Reads one command per line on stdin and answers one JSON line per command on stdout:
//   kill <i> | stop <i> | restart <i> | stopall | startall | freeze <i> | resume <i> | killmany <i> <j> ... | pids | quit
// Every answer carries the members' pids and whether each is alive (running or frozen).
// --public-addresses a,b,... gives member i a client port of its own that advertises address i to clients.
// --config FILE is a member configuration file every member imports (see startMember).
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startCluster } from '../../scripts/hazelcast.mjs';

const { values } = parseArgs({
  options: {
    members: { type: 'string', default: '1' }, 'log-dir': { type: 'string' }, 'public-addresses': { type: 'string' }, config: { type: 'string' },
  },
});
const clientPublicAddresses = values['public-addresses']?.split(',');
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
let cluster;
try {
  cluster = await startCluster({ members: Number(values.members), logDir: values['log-dir'], clientPublicAddresses, config: values.config });
} catch (error) {
  say({ ok: false, cmd: 'start', error: String(error?.message ?? error) });
  process.exit(1);
}
const state = () => ({
  pids: cluster.members.map((m) => m.pid),
  alive: cluster.members.map((m) => m.process.exitCode === null && m.process.signalCode === null),
});
say({ ok: true, cmd: 'start', clusterName: cluster.clusterName, addresses: cluster.addresses, ...state() });

const member = (i) => {
  const m = cluster.members[i];
  if (!m) throw new RangeError(`no member ${i} (cluster has ${cluster.members.length})`);
  return m;
};
const signal = (i, sig) => {
  if (!member(i).process.kill(sig)) throw new Error(`member ${i} (pid ${member(i).pid}) is not running`);
};

// Waits until every thread of member i is stopped (state T in /proc), or none is: kill() only queues the signal, so a
// freeze is done when the JVM has stopped, not when the signal was sent.
const threadsSettle = async (i, stopped, timeoutMs = 5_000) => {
  const { pid } = member(i);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
      try {
        return [readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').replace(/^.*\) /s, '')[0]];
      } catch {
        return []; // the thread ended meanwhile
      }
    });
    if (states.every((state) => (state === 'T') === stopped)) return;
    if (Date.now() > deadline) {
      throw new Error(`member ${i} (pid ${pid}): threads ${stopped ? 'not all stopped' : 'still stopped'} after ${timeoutMs} ms (${states.join('')})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
};

const commands = {
  kill: async (i) => member(i).kill('SIGKILL'),
  stop: async (i) => member(i).stop(),
  restart: async (i) => {
    cluster.members[i] = await cluster.restartMember(i);
  },
  stopall: async () => Promise.all(cluster.members.map((m) => m.stop())),
  startall: async () => {
    const restarted = await Promise.all(cluster.members.map((_, i) => cluster.restartMember(i)));
    restarted.forEach((m, i) => (cluster.members[i] = m));
  },
  // A frozen JVM keeps its sockets open and answers nothing: a long GC pause or a stalled VM.
  freeze: async (i) => {
    signal(i, 'SIGSTOP');
    await threadsSettle(i, true);
  },
  resume: async (i) => {
    signal(i, 'SIGCONT');
    await threadsSettle(i, false);
  },
  // All signals are sent before any exit is awaited, so the members die together and partitions whose
  // primary and backups were all on them are lost (one by one, backups would be promoted in between).
  killmany: async (...indexes) => {
    const victims = indexes.map(member);
    for (const m of victims) m.process.kill('SIGKILL');
    await Promise.all(victims.map((m) => m.exited));
  },
  pids: async () => undefined,
  quit: async () => {
    await cluster.stop();
    say({ ok: true, cmd: 'quit' });
    process.exit(0);
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, ...args] = line.trim().split(/\s+/);
  try {
    if (!commands[cmd]) throw new Error(`unknown command ${cmd}`);
    await commands[cmd](...args.map(Number));
    say({ ok: true, cmd, ...state() });
  } catch (error) {
    say({ ok: false, cmd, error: String(error?.message ?? error) });
  }
}
await cluster.stop();
