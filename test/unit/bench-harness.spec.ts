import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpuMsOf, cpuWindow, descendantsOf } from '../../bench/proc-cpu';
import { allSeen, WorkerNode } from '../../bench/worker-node';

/** A real process that prints `script`'s chunks with pauses between them, so lines arrive split across reads. */
function printer(chunks: string[]) {
  const code = `const c = ${JSON.stringify(chunks)}; let i = 0; const t = setInterval(() => { process.stdout.write(c[i++]); if (i === c.length) { clearInterval(t); setTimeout(() => {}, 60000); } }, 30);`;
  return spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('bench harness', () => {
  it('reads a worker\'s lines once as they arrive, lines split across chunks included, and waits for every id', async () => {
    const child = printer(['READY\nS noop:a 10.5\nC noop:a 1', '1.25\nS noop:b 12\n', 'C noop:b 13.5\nC noop:other 14\n', 'C noop:c 15\n']);
    const node = new WorkerNode('printer', child);
    try {
      await node.untilReady();
      // Three completions of the ids asked for: the count alone (a, b, other) must not be taken for all of them.
      await allSeen([node], 'completed', ['noop:a', 'noop:b', 'noop:c'], 'a, b and c', 10_000);
      expect(node.completed.get('noop:a')).toBe(11.25);
      expect(node.started.get('noop:a')).toBe(10.5);
      expect([...node.completed.keys()]).toEqual(['noop:a', 'noop:b', 'noop:other', 'noop:c']);
    } finally {
      await node.stop();
    }
  });

  it('fails a wait at its deadline when an id never completes', async () => {
    const child = printer(['READY\nC noop:a 1\nC noop:b 2\n']);
    const node = new WorkerNode('printer', child);
    try {
      await node.untilReady();
      await expect(allSeen([node], 'completed', ['noop:a', 'noop:missing'], 'a and missing', 500)).rejects.toThrow('a and missing');
    } finally {
      await node.stop();
    }
  });

  it('fails at once when a worker exits before READY, with its stderr', async () => {
    const child = spawn(process.execPath, ['-e', 'console.error("no member"); process.exit(3)'], { stdio: ['ignore', 'pipe', 'pipe'] });
    await expect(new WorkerNode('broken', child).untilReady()).rejects.toThrow(/broken exited \(3\) before READY: no member/);
  });

  it('counts the CPU a child process burns, found below this process', async () => {
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 600; while (Date.now() < end); setTimeout(() => {}, 60000);'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(descendantsOf(process.pid)).toContain(child.pid);
      const window = cpuWindow({ bench: process.pid, member: [child.pid!] });
      await new Promise((resolve) => setTimeout(resolve, 900));
      const used = window.stop();
      // It spins for 600 ms from its start; most of that falls in the window (a loaded machine gives it less).
      expect(used.member).toBeGreaterThan(100);
      expect(used.redis).toBeNull();
      expect(cpuMsOf(child.pid!)).toBeGreaterThanOrEqual(used.member!);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
