import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ClientConfig } from 'hazelcast-client';

interface Answer { ok: boolean; cmd: string; error?: string; clusterName?: string; addresses?: string[] }

/** A cluster of its own that a fault test can kill, stop and restart member by member. */
export class ControlledCluster {
  private answers: Answer[] = [];
  private waiters: Array<(a: Answer) => void> = [];
  clusterName = '';
  addresses: string[] = [];

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const answer = JSON.parse(line) as Answer;
      const waiter = this.waiters.shift();
      if (waiter) waiter(answer);
      else this.answers.push(answer);
    });
  }

  /** Starts `members` members and waits until they formed one cluster. */
  static async start(members: number): Promise<ControlledCluster> {
    const child = spawn(process.execPath, [join(__dirname, 'cluster-control.process.mjs'), '--members', String(members), '--log-dir', '.cache/test-logs'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const cluster = new ControlledCluster(child);
    const started = await cluster.next();
    if (!started.ok) throw new Error(`cluster did not start: ${started.error}`);
    cluster.clusterName = started.clusterName!;
    cluster.addresses = started.addresses!;
    return cluster;
  }

  /** Client config for this cluster. */
  clientConfig(): ClientConfig {
    return {
      clusterName: this.clusterName,
      network: { clusterMembers: this.addresses },
      properties: { 'hazelcast.logging.level': 'OFF' },
    };
  }

  kill(i: number) { return this.send(`kill ${i}`); }
  restart(i: number) { return this.send(`restart ${i}`); }
  stopAll() { return this.send('stopall'); }
  startAll() { return this.send('startall'); }

  async quit(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.stdin!.write('quit\n');
    await exited;
  }

  private async send(command: string): Promise<void> {
    this.child.stdin!.write(`${command}\n`);
    const answer = await this.next();
    if (!answer.ok) throw new Error(`${command} failed: ${answer.error}`);
  }

  private next(): Promise<Answer> {
    const ready = this.answers.shift();
    return ready ? Promise.resolve(ready) : new Promise((resolve) => this.waiters.push(resolve));
  }
}
