import type { HazelcastBackendOptions } from '../../backends/hazelcast/hazelcast-backend';
import { refuseNearCaches } from '../../backends/hazelcast/library-maps';
import { nameInput } from '../../core/names';
import { passThroughObject } from './option-fields';
import { optionKeys, parseOption } from './option-schema';
import type { GatekeeperModuleOptions, ResolvedGatekeeperOptions } from './gatekeeper.options';

const HAZELCAST_KEYS: ReadonlyArray<keyof NonNullable<GatekeeperModuleOptions['hazelcast']>> = ['client', 'clientConfig', 'mapPrefix', 'callTimeoutMs'];

export const HAZELCAST_OPTION_KEYS = optionKeys(HAZELCAST_KEYS, { lists: true });

const CLIENT_CONFIG = passThroughObject<NonNullable<HazelcastBackendOptions['clientConfig']>>('a hazelcast-client ClientConfig object');

/** Checks that the `hazelcast` option, when given, is an object of known keys (its values: {@link resolveHazelcast}). */
export function checkHazelcastKeys(hazelcast: unknown): void {
  parseOption(HAZELCAST_OPTION_KEYS.optional(), hazelcast, 'hazelcast');
}

/**
 * The `hazelcast` option: the client config passes through whole (TLS, credentials, cloud discovery, routing, ...),
 * but no near cache may cover the library's maps (see {@link refuseNearCaches}).
 */
export function resolveHazelcast(hazelcast: GatekeeperModuleOptions['hazelcast']): ResolvedGatekeeperOptions['hazelcast'] {
  if (hazelcast === undefined) return {};
  const mapPrefix = parseOption(nameInput().optional(), hazelcast.mapPrefix, 'hazelcast.mapPrefix');
  const clientConfig = parseOption(CLIENT_CONFIG.optional(), hazelcast.clientConfig, 'hazelcast.clientConfig');
  // What the config holds is the client's to check; only the near caches are the library's concern.
  refuseNearCaches({ client: hazelcast.client, clientConfig }, mapPrefix);
  return hazelcast;
}
