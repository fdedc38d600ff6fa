import Redis from 'ioredis';
async function main() {
  const redis = new Redis(process.env.GATEKEEPER_REDIS_URL!);
  redis.defineCommand('echoit', { numberOfKeys: 1, lua: "redis.call('SET', KEYS[1], ARGV[1]) return 1" });
  const N = 20000;
  for (let round = 0; round < 3; round++) {
    for (const size of [100, 500, 1300]) {
      const v = 'x'.repeat(size);
      const cpu = process.cpuUsage();
      for (let i = 0; i < N; i++) await (redis as any).echoit('k', v);
      const u = process.cpuUsage(cpu);
      console.log(size, 'cpu us/call', ((u.user + u.system) / N).toFixed(1));
    }
  }
  redis.disconnect();
}
main();
