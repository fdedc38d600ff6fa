import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { eventually } from './eventually';
import { declareFresh } from './fresh-cluster';

/** A Hazelcast cluster of its own, run by the project's script in a child process, for tests that stop it. */
export interface MemberProcess {
  clusterName: string;
  addresses: string[];
  /** Stops the members gracefully (SIGTERM to the script). */
  stop(): Promise<void>;
}

/** Starts `node scripts/hazelcast.mjs start` on `port` and waits until it prints the cluster's address. */
export async function startMemberProcess(port: number, clusterName: string): Promise<MemberProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [join(__dirname, '../../scripts/hazelcast.mjs'), 'start', '--port', String(port), '--cluster-name', clusterName, '--log-dir', '.cache/test-logs'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => (output += String(chunk)));
  child.stderr?.on('data', (chunk) => (output += String(chunk)));
  const exited = once(child, 'exit');
  await eventually(`the member on port ${port} to start (output: ${output})`, () => {
    if (child.exitCode !== null) throw new Error(`member script exited: ${output}`);
    return output.includes('GATEKEEPER_HZ_MEMBERS=');
  }, { timeoutMs: 90_000, intervalMs: 100 });
  // The test started this member itself: nothing was ever granted on it, so its first grants need no recovery wait.
  await declareFresh({ clusterName, network: { clusterMembers: [`127.0.0.1:${port}`] }, properties: { 'hazelcast.logging.level': 'OFF' } });
  return {
    clusterName,
    addresses: [`127.0.0.1:${port}`],
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
