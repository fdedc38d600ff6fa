import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ClientConfig } from 'hazelcast-client';
import { TcpProxy } from '../harness/tcp-proxy';

interface Answer {
  ok: boolean;
  cmd: string;
  error?: string;
  clusterName?: string;
  addresses?: string[];
  pids?: number[];
  alive?: boolean[];
}

/** Options of {@link ControlledCluster.start}. */
export interface ControlledClusterOptions {
  /**
   * Put a {@link TcpProxy} (in this process) in front of each member's client port: members advertise the proxy's
   * address, so clients reach member i only through `proxy(i)`. Members still talk to each other directly.
   */
  proxied?: boolean;
  /** A member configuration file (maps, split-brain protection) that every member imports, as a production cluster would. */
  config?: string;
}

/**
 * A cluster of its own that a fault test can kill, stop, freeze and restart member by member (the nemesis's
 * member side). Members run in a child process; proxies, if any, in this one, so switching a proxy's mode is a
 * plain synchronous call.
 */
export class ControlledCluster {
  private answers: Answer[] = [];
  private waiters: Array<(a: Answer) => void> = [];
  private memberPids: number[] = [];
  private memberAlive: boolean[] = [];
  private dead?: Answer;
  clusterName = '';
  /** Where clients connect: the proxies when proxied, else the members. */
  addresses: string[] = [];
  /** The members' own client addresses (bypassing any proxy). */
  directAddresses: string[] = [];

  private constructor(
    private readonly child: ChildProcess,
    private readonly proxies: TcpProxy[],
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const answer = JSON.parse(line) as Answer;
      if (answer.pids) this.memberPids = answer.pids;
      if (answer.alive) this.memberAlive = answer.alive;
      const waiter = this.waiters.shift();
      if (waiter) waiter(answer);
      else this.answers.push(answer);
    });
    // A child that dies answers every pending and later command with an error instead of leaving it hanging.
    child.once('exit', (code, signal) => {
      const dead = { ok: false, cmd: '', error: `cluster-control process exited (${signal ?? code})` };
      this.dead = dead;
      for (const waiter of this.waiters.splice(0)) waiter(dead);
    });
  }

  /** Starts `members` members and waits until they formed one cluster. */
  static async start(members: number, { proxied = false, config }: ControlledClusterOptions = {}): Promise<ControlledCluster> {
    const proxies = proxied ? await Promise.all(Array.from({ length: members }, () => TcpProxy.listen())) : [];
    const args = ['--members', String(members), '--log-dir', '.cache/test-logs'];
    if (proxied) args.push('--public-addresses', proxies.map((p) => p.address).join(','));
    if (config) args.push('--config', config);
    const child = spawn(process.execPath, [join(__dirname, 'cluster-control.process.mjs'), ...args], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const cluster = new ControlledCluster(child, proxies);
    const started = await cluster.next();
    if (!started.ok) {
      await Promise.all(proxies.map((p) => p.close()));
      throw new Error(`cluster did not start: ${started.error}`);
    }
    cluster.clusterName = started.clusterName!;
    cluster.directAddresses = started.addresses!;
    proxies.forEach((p, i) => p.setTarget(cluster.directAddresses[i]));
    cluster.addresses = proxied ? proxies.map((p) => p.address) : cluster.directAddresses;
    return cluster;
  }

  /** Client config for this cluster (through the proxies when proxied). */
  clientConfig(): ClientConfig {
    return {
      clusterName: this.clusterName,
      network: { clusterMembers: this.addresses },
      properties: { 'hazelcast.logging.level': 'OFF' },
    };
  }

  /** The proxy in front of member `i` (only with `proxied: true`). */
  proxy(i: number): TcpProxy {
    const proxy = this.proxies[i];
    if (!proxy) throw new RangeError(this.proxies.length ? `no member ${i}` : 'this cluster was started without proxied: true');
    return proxy;
  }

  /** The member JVMs' pids, as of the last command (a killed member keeps its old pid until restarted). */
  pids(): number[] {
    return [...this.memberPids];
  }

  /** Whether each member's JVM is running (a frozen one counts as running), as of the last command. */
  alive(): boolean[] {
    return [...this.memberAlive];
  }

  // Proxies refuse connections while their member is down (see TcpProxy.refuse) and accept again once it is back.

  /** SIGKILL: a crash. */
  async kill(i: number) {
    await this.send(`kill ${i}`);
    this.proxies[i]?.refuse();
  }
  /** SIGTERM: graceful shutdown (the member hands its partitions over). */
  async stop(i: number) {
    await this.send(`stop ${i}`);
    this.proxies[i]?.refuse();
  }
  async restart(i: number) {
    this.proxies[i]?.refuse();
    await this.send(`restart ${i}`);
    await this.proxies[i]?.admit();
  }
  async stopAll() {
    await this.send('stopall');
    this.proxies.forEach((p) => p.refuse());
  }
  async startAll() {
    await this.send('startall');
    await Promise.all(this.proxies.map((p) => p.admit()));
  }
  /** SIGSTOP the member's JVM: its sockets stay open, nothing answers (a long GC pause). */
  freeze(i: number) { return this.send(`freeze ${i}`); }
  /** SIGCONT a frozen member. */
  resume(i: number) { return this.send(`resume ${i}`); }
  /** SIGKILL several members at the same instant: partitions with all replicas on them are lost. */
  async killMany(indexes: number[]) {
    await this.send(`killmany ${indexes.join(' ')}`);
    for (const i of indexes) this.proxies[i]?.refuse();
  }

  async quit(): Promise<void> {
    await Promise.all(this.proxies.map((p) => p.close()));
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
    const ready = this.answers.shift() ?? this.dead;
    return ready ? Promise.resolve(ready) : new Promise((resolve) => this.waiters.push(resolve));
  }
}
