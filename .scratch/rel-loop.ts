import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { redlockNode } from '../bench/bench-systems';
import { gatekeeperRedisNode, prepareRedisPrefix } from '../bench/redis-systems';

const N = Number(process.env.N ?? 5000);
async function main() {
  const url = process.env.GATEKEEPER_REDIS_URL!;
  const prefix = `loop-${Date.now()}`;
  const names = Array.from({ length: 100 }, (_, i) => `job-${i}`);
  await prepareRedisPrefix(url, prefix, names, () => false);
  const ours = await gatekeeperRedisNode('a', url, prefix);
  const port = Number(new URL(url).port);
  const red = await redlockNode(port);
  const systems = [['ours', ours], ['redlock', red]] as const;
  const session = new Session(); session.connect();
  for (let round = 0; round < 3; round++) {
    for (const [label, node] of systems) {
      const prof = round === 2 && process.env.PROF;
      if (prof) { await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 50 }); await session.post('Profiler.start'); }
      const w0 = { ...(globalThis as any).__writes };
      const cpu = process.cpuUsage();
      const t = performance.now();
      for (let i = 0; i < N; i++) {
        const name = names[i % 100];
        if (await node.acquire(name, 5000)) await node.release(name, 0);
      }
      const used = process.cpuUsage(cpu);
      if (prof) { const { profile } = await session.post('Profiler.stop'); writeFileSync(`/tmp/loop-${label}.cpuprofile`, JSON.stringify(profile)); }
      const w = (globalThis as any).__writes;
      console.log(label, 'writes/job', ((w.calls - w0.calls) / N).toFixed(2), 'bytes/job', ((w.bytes - w0.bytes) / N).toFixed(0), 'cpu us/job', ((used.user + used.system) / N).toFixed(1), 'wall us/job', ((performance.now() - t) * 1000 / N).toFixed(1));
    }
  }
  await ours.close(); await red.close();
}
main().then(() => process.exit(0));
