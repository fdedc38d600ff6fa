import type { Command } from 'commander';
import { declareNewStore } from '../permits/new-store';
import { CliUsageError } from './cli-errors';
import { CLI_NAME } from './cli-format';
import { jarSourceFromEnv, LocalMemberError, memberJar, portIsFree, startLocalMember } from './local-member';

/** Adds `hazelcast start`: a local member from the installed package, declared new (as `store init` does). */
export function addHazelcastCommands(program: Command): void {
  const hazelcast = program.command('hazelcast').description('a local Hazelcast member for development');
  hazelcast
    .command('start')
    .description(
      'run one open-source Hazelcast member on 127.0.0.1 in the foreground (Ctrl-C stops it; its data goes with it), declared new. ' +
        'Downloads the member jar from Maven Central once (GATEKEEPER_MAVEN_REPOSITORY for a mirror, GATEKEEPER_CACHE_DIR for where ' +
        'it is kept, GATEKEEPER_HZ_VERSION for another version); needs Java 17+',
    )
    .option('--port <port>', 'the port clients connect to', '5701')
    .action(async (o: { port: string }) => {
      const port = Number(o.port);
      if (!/^\d+$/.test(o.port) || port < 1 || port > 65_535) throw new CliUsageError(`invalid --port: '${o.port}' is not a port (1 to 65535)`, 'port');
      const { clusterName } = program.opts<{ clusterName: string }>();
      await runLocalMember(port, clusterName, (line) => process.stdout.write(`${line}\n`));
    });
}

async function runLocalMember(port: number, clusterName: string, log: (line: string) => void): Promise<void> {
  // Signals first: a Ctrl-C during the download or the start stops what was started, and nothing is left running.
  let stopping = false;
  let member: Awaited<ReturnType<typeof startLocalMember>> | undefined;
  const stop = () => {
    stopping = true;
    void member?.stop();
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of signals) process.on(signal, stop);
  try {
    if (!(await portIsFree(port))) {
      throw new LocalMemberError(
        `port ${port} on 127.0.0.1 is in use (a member already running there?): use that one (--members 127.0.0.1:${port}), or pick another with --port`,
      );
    }
    const source = jarSourceFromEnv(process.env);
    const jar = await memberJar(source, log);
    if (stopping) return;
    member = await startLocalMember(jar, { port, clusterName });
    const started = member;
    const [{ HazelcastConnection }, { HazelcastBackend }] = await Promise.all([
      import('../backends/hazelcast/hazelcast-connection'),
      import('../backends/hazelcast/hazelcast-backend'),
    ]);
    const connection = new HazelcastConnection({
      clientConfig: {
        clusterName,
        network: { clusterMembers: [started.address] },
        connectionStrategy: { connectionRetry: { clusterConnectTimeoutMillis: 120_000, maxBackoffMillis: 500 } },
        properties: { 'hazelcast.logging.level': 'OFF' },
      },
    });
    try {
      const client = await Promise.race([
        connection.open(),
        started.exited.then(async (code) => {
          throw new LocalMemberError(stopping
            ? 'stopped before the member accepted clients'
            : `the member exited (code ${code}) before it accepted clients; its log ends:\n${await started.logTail()}`);
        }),
      ]);
      // Only the member this command started, alone: never declare a cluster someone else runs new.
      const members = client.getCluster().getMembers().map((m) => `${m.address.host}:${m.address.port}`);
      if (members.length !== 1 || members[0] !== started.address) {
        throw new LocalMemberError(`the cluster reached at ${started.address} is not only the member just started (it has ${members.join(', ')}); nothing was declared`);
      }
      await declareNewStore(new HazelcastBackend({ connection }));
    } finally {
      await connection.close();
    }
    log(
      [
        `Hazelcast ${source.version} member on ${started.address}, cluster "${clusterName}", declared new: first grants need no recovery wait.`,
        'Point the CLI (and apps that read them) at it:',
        `  export GATEKEEPER_HZ_MEMBERS=${started.address}`,
        `  export GATEKEEPER_HZ_CLUSTER_NAME=${clusterName}`,
        `In the module: hazelcast: { clientConfig: { clusterName: '${clusterName}', network: { clusterMembers: ['${started.address}'] } } }`,
        `Ctrl-C stops it (its data goes with it). Try: ${CLI_NAME} --members ${started.address} --cluster-name ${clusterName} list`,
      ].join('\n'),
    );
    const code = await started.exited;
    log(stopping ? 'Member stopped.' : `The member exited on its own (code ${code}).`);
  } catch (error) {
    await member?.stop();
    throw error;
  } finally {
    for (const signal of signals) process.removeListener(signal, stop);
  }
}
