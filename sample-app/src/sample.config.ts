import type { GatekeeperModuleOptions } from 'nestjs-gatekeeper';

/** Everything an instance takes from its environment (the sample runner sets these per instance). */
export const sampleConfig = {
  port: Number(process.env.PORT ?? 3000),
  acquirer: process.env.SAMPLE_ACQUIRER ?? `app-${process.env.PORT ?? 3000}`,
  group: process.env.SAMPLE_GROUP ?? 'production',
  // The admin API's token: the same variable the CLI sends (jobs describe, run, pause, resume), with a default for
  // a local try-out only.
  adminToken: process.env.GATEKEEPER_ADMIN_TOKEN || 'sample-admin-token-change-me',
};

/** The gatekeeper options of the sample: one definition per job, so each shows a feature. */
export function gatekeeperOptions(): GatekeeperModuleOptions {
  return {
    identity: { group: sampleConfig.group, acquirer: sampleConfig.acquirer },
    ...(process.env.SAMPLE_BACKEND === 'postgres'
      ? {
          // `npm run sample -- --backend postgres`: the same app on PostgreSQL; the connection string comes from
          // GATEKEEPER_PG_URL (the module's default).
          backend: 'postgres' as const,
          postgres: { mapPrefix: process.env.SAMPLE_MAP_PREFIX ?? 'gatekeeper' },
        }
      : process.env.SAMPLE_BACKEND === 'redis'
      ? {
          // `npm run sample -- --backend redis`: the same app on Redis (ioredis); the URL comes from
          // GATEKEEPER_REDIS_URL (the module's default).
          backend: 'redis' as const,
          redis: { mapPrefix: process.env.SAMPLE_MAP_PREFIX ?? 'gatekeeper' },
        }
      : {
          hazelcast: {
            mapPrefix: process.env.SAMPLE_MAP_PREFIX ?? 'gatekeeper',
            // Cluster name and members come from GATEKEEPER_HZ_CLUSTER_NAME / GATEKEEPER_HZ_MEMBERS (the module's defaults).
            clientConfig: { properties: { 'hazelcast.logging.level': 'WARN' } },
          },
        }),
    definitions: [
      // One node at a time runs billing; the holder keeps it as long as it refreshes.
      { name: 'billing', permits: 1, duration: '6s', groupPattern: 'production|dr-site' },
      // Two nodes at a time run reports.
      { name: 'reports', permits: 2, duration: '9s' },
      // Only the DR site runs the DR check.
      { name: 'dr-check', permits: 1, duration: '15s', groupPattern: 'dr-site' },
      // A run longer than its permit: kept alive while it runs, released after (release mode).
      { name: 'export', permits: 1, duration: '4s' },
      // Taken by hand through GatekeeperService in the controller.
      { name: 'reindex', permits: 1, duration: '5s' },
    ],
    // One leader among the three instances, for the leader-only digest job (a crashed leader is replaced within ~8 s).
    elections: [{ name: 'leader', lease: '6s' }],
    // 12 queues spread over the instances (4 each with three); a crashed instance's queues move within ~7 s.
    allocations: [{ name: 'queues', lease: '6s', rebalanceDelay: '2s' }],
    // Distributed tasks (the recon batch): a dead instance's record sets run again within 5 s + 1 s.
    tasks: { scanInterval: '1s', retention: '10m' },
    // Presence: who is here (ClusterService.participants(), the admin API's /gatekeeper/cluster). Each instance
    // advertises the address it listens on (http://127.0.0.1:<port>), where the CLI's jobs commands reach it.
    membership: { interval: '2s' },
    // Prometheus metrics in prom-client's global registry, served at GET /metrics (metrics.controller.ts).
    metrics: true,
    // The sample runner turns it on for its first instance only ('off' elsewhere).
    stateDumpInterval: process.env.SAMPLE_STATE_DUMP === 'off' ? undefined : (process.env.SAMPLE_STATE_DUMP ?? '30s'),
  };
}
