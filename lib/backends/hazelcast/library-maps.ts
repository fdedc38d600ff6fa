import type { HazelcastConnectionOptions } from './hazelcast-connection.options';
import { CANARY_MAP } from './hazelcast-partition-canaries';
import { invalidOption } from '../../core/errors/input.errors';

/**
 * Every IMap the library reads and writes for a map prefix (default `'gatekeeper'`): permits (and which semaphores ever had an entry), presence, tasks and
 * task groups, runtime schedules, job history, skipped ticks and run-now requests, the counters, and the partition canaries (shared by every prefix). A test keeps this list in step with the maps a
 * node actually opens.
 */
export function libraryMapNames(prefix = 'gatekeeper'): string[] {
  return [`${prefix}.semaphores`, `${prefix}.semaphore-keys`, `${prefix}.presence`, `${prefix}.tasks`, `${prefix}.task-groups`, `${prefix}.schedules`, `${prefix}.job-runs`, `${prefix}.job-ticks`, `${prefix}.job-requests`, `${prefix}.counters`, `${prefix}.lost-records`, CANARY_MAP];
}

/**
 * The first near-cache config key that would apply to one of the library's maps, with that map: the exact name, a
 * wildcard pattern (every `*` read as any text, which covers the client's one-wildcard matching and more), or
 * `default` (the client's fallback for every map no other key matches). `undefined` when none would.
 */
export function nearCacheOnLibraryMap(patterns: readonly string[], prefix?: string): { pattern: string; map: string } | undefined {
  const maps = libraryMapNames(prefix);
  for (const pattern of patterns) {
    if (pattern === 'default') return { pattern, map: maps[0] };
    const matcher = new RegExp(`^${pattern.split('*').map(escapeRegex).join('.*')}$`, 's');
    const map = maps.find((name) => matcher.test(name));
    if (map !== undefined) return { pattern, map };
  }
  return undefined;
}

/**
 * Refuses a near cache over one of the library's maps, in the module's `hazelcast` option (its `clientConfig`, or the
 * config of the `client` given): a near cache answers reads from a local copy that an invalidation may reach late,
 * and a permit decided on a stale copy could be granted twice.
 */
export function refuseNearCaches(hazelcast: HazelcastConnectionOptions, mapPrefix: string | undefined): void {
  const sources: Array<[string, object | undefined]> = [['hazelcast.clientConfig.nearCaches', hazelcast.clientConfig?.nearCaches]];
  if (hazelcast.client) sources.push(['hazelcast.client', safeNearCaches(hazelcast.client)]);
  for (const [path, nearCaches] of sources) {
    const hit = nearCaches && nearCacheOnLibraryMap(Object.keys(nearCaches), mapPrefix);
    if (!hit) continue;
    throw invalidOption(
      path === 'hazelcast.client' ? 'hazelcast.client' : `${path}[${JSON.stringify(hit.pattern)}]`,
      `${path === 'hazelcast.client' ? `its config has a near cache "${hit.pattern}"` : 'this near cache'} would cover the library's map "${hit.map}": ` +
        'a near cache serves reads from a local copy that may be stale, and permits decided on stale reads could be granted twice. ' +
        'Name the maps of your own near caches (or a pattern that leaves out the library\'s maps) instead',
    );
  }
}

/** An injected client's near-cache configs (`getConfig()` is the client's public API; anything else has none). */
function safeNearCaches(client: object): object | undefined {
  const config = (client as { getConfig?: () => { nearCaches?: object } }).getConfig?.();
  return config?.nearCaches;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
