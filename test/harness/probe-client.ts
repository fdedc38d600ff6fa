/* A map client in another process (probe-client.process.mjs), to aim pid-scoped proxy faults at. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ClientConfig } from 'hazelcast-client';
import { eventually } from '../support/eventually';

export class ProbeClient {
  private nextId = 1;
  private readonly pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const { id, value, error } = JSON.parse(line) as { id: string; value?: unknown; error?: string };
      const waiter = this.pending.get(id);
      this.pending.delete(id);
      if (error) waiter?.reject(new Error(error));
      else waiter?.resolve(value);
    });
  }

  /** Starts the process and waits until its client is connected. */
  static async start(config: ClientConfig): Promise<ProbeClient> {
    const child = spawn(process.execPath, [join(__dirname, 'probe-client.process.mjs'), JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let output = '';
    child.stdout!.on('data', (c) => (output += String(c)));
    await eventually('the probe client to connect', () => {
      if (child.exitCode !== null) throw new Error(`probe client exited: ${output}`);
      return output.includes('READY');
    }, { timeoutMs: 30_000 });
    return new ProbeClient(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** `map.get(key)` in the other process. */
  get(map: string, key: string): Promise<unknown> {
    const id = String(this.nextId++);
    const answer = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.child.stdin!.write(`${id} get ${map} ${key}\n`);
    return answer;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
  }
}
