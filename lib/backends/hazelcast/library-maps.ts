import { CANARY_MAP } from './hazelcast-partition-canaries';

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

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
