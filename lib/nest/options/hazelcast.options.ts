import type { HazelcastStoreOptions } from '../../backends/hazelcast/permits/hazelcast-permit.store';
import { nearCacheOnLibraryMap } from '../../backends/hazelcast/library-maps';
import { nameInput } from '../../core/names';
import { passThroughObject } from './option-fields';
import { optionKeys, parseOption } from './option-schema';
import type { GatekeeperModuleOptions, ResolvedGatekeeperOptions } from './gatekeeper.options';
import { invalidOption } from '../../core/errors/input.errors';

const HAZELCAST_KEYS: ReadonlyArray<keyof HazelcastStoreOptions> = ['client', 'clientConfig', 'mapPrefix', 'callTimeoutMs'];

export const HAZELCAST_OPTION_KEYS = optionKeys(HAZELCAST_KEYS, { lists: true });

const CLIENT_CONFIG = passThroughObject<NonNullable<HazelcastStoreOptions['clientConfig']>>('a hazelcast-client ClientConfig object');

/** Checks that the `hazelcast` option, when given, is an object of known keys (its values: {@link resolveHazelcast}). */
export function checkHazelcastKeys(hazelcast: unknown): void {
  parseOption(HAZELCAST_OPTION_KEYS.optional(), hazelcast, 'hazelcast');
}

/**
 * The `hazelcast` option: the client config passes through whole (TLS, credentials, cloud discovery, routing, ...),
 * but no near cache may cover the library's maps: a near cache answers reads from a local copy that an invalidation
 * may reach late, and a permit decided on a stale copy could be granted twice.
 */
export function resolveHazelcast(hazelcast: GatekeeperModuleOptions['hazelcast']): ResolvedGatekeeperOptions['hazelcast'] {
  if (hazelcast === undefined) return {};
  const mapPrefix = parseOption(nameInput().optional(), hazelcast.mapPrefix, 'hazelcast.mapPrefix');
  const clientConfig = parseOption(CLIENT_CONFIG.optional(), hazelcast.clientConfig, 'hazelcast.clientConfig');
  // What the config holds is the client's to check; only the near caches are the library's concern.
  const sources: Array<[string, object | undefined]> = [['hazelcast.clientConfig.nearCaches', clientConfig?.nearCaches]];
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
  return hazelcast;
}

/** An injected client's near-cache configs (`getConfig()` is the client's public API; anything else has none). */
function safeNearCaches(client: object): object | undefined {
  const config = (client as { getConfig?: () => { nearCaches?: object } }).getConfig?.();
  return config?.nearCaches;
}
