import { CAPABILITY_STATES, type CapabilityState } from '../core/capability-state';
import type { Presence } from '../presence/presence';
import { describePlace, sameScope, type StoreLayout, type StorePlace } from '../presence/store-place';
import type { CliConnectionOptions } from './cli-reached-store';
import { StoreNotGivenError } from './cli-errors';

/** The stores the CLI can reach: the one it was pointed at and any other one its options name. */
type Kind = CliConnectionOptions['backend'];

/** Where the live nodes keep each capability's state, as their presences say, and what they disagree on. */
export interface LiveLayout {
  /** Each capability's place, where every live node that says agrees (else absent: see `disputed`). */
  readonly places: Partial<Record<CapabilityState, StorePlace>>;
  /** Capabilities the live nodes put on different stores (a move under way), with what each says. */
  readonly disputed: Partial<Record<CapabilityState, string>>;
  /** How many live nodes said where their state is. */
  readonly nodes: number;
}

/** The layout the live nodes announce (`undefined`: none of them says, as an older version does). */
export function liveLayout(presences: readonly Presence[]): LiveLayout | undefined {
  const layouts = presences.flatMap((p) => (p.stores ? [{ node: p.acquirer, stores: p.stores }] : []));
  if (layouts.length === 0) return undefined;
  const places: Partial<Record<CapabilityState, StorePlace>> = {};
  const disputed: Partial<Record<CapabilityState, string>> = {};
  for (const capability of CAPABILITY_STATES) {
    const distinct: Array<{ place: StorePlace; nodes: string[] }> = [];
    for (const { node, stores } of layouts) {
      const place = stores[capability];
      const same = distinct.find((d) => sameScope(d.place, place) && d.place.address === place.address);
      if (same) same.nodes.push(node);
      else distinct.push({ place, nodes: [node] });
    }
    if (distinct.length === 1) places[capability] = distinct[0].place;
    else disputed[capability] = distinct.map((d) => `${d.nodes.join(', ')} on ${describePlace(d.place)}`).join('; ');
  }
  return { places, disputed, nodes: layouts.length };
}

/** The option that names a store of each kind, for the messages. */
const NAMED_BY: Readonly<Record<Kind, string>> = {
  postgres: '--pg-url (or GATEKEEPER_PG_URL)',
  redis: '--redis-url (or GATEKEEPER_REDIS_URL)',
  hazelcast: '--members and --cluster-name (or GATEKEEPER_HZ_MEMBERS and GATEKEEPER_HZ_CLUSTER_NAME)',
};

/** Whether the options name a store of `kind` (Hazelcast: only as the store the CLI was pointed at). */
export function namesKind(options: CliConnectionOptions, kind: string): kind is Kind {
  if (kind === options.backend) return true;
  if (kind === 'postgres') return options.postgresUrl !== undefined;
  if (kind === 'redis') return options.redisUrl !== undefined;
  return false;
}

/**
 * The connection options that reach `capability`'s store as the live nodes announce it: its kind, with the URL the
 * options give for that kind and the scope (schema, map prefix) the nodes use. Throws {@link StoreNotGivenError}
 * when the nodes disagree, keep it in their own memory, or on a store the options do not name.
 */
export function optionsFor(capability: CapabilityState, layout: LiveLayout, options: CliConnectionOptions): CliConnectionOptions {
  const disputed = layout.disputed[capability];
  if (disputed !== undefined) {
    throw new StoreNotGivenError(capability, `the live nodes keep ${capability} on different stores (${disputed}): a move between stores is under way; finish it, or stop the nodes of the old layout, before changing ${capability} from the CLI`);
  }
  const place = layout.places[capability]!;
  if (place.kind === 'memory') {
    throw new StoreNotGivenError(capability, `the live nodes keep ${capability} in their own memory (backend 'memory'): no other process can read or change it`);
  }
  if (!namesKind(options, place.kind)) {
    const how = place.kind in NAMED_BY ? `: give ${NAMED_BY[place.kind as Kind]}` : '';
    throw new StoreNotGivenError(capability, `the live nodes keep ${capability} on ${describePlace(place)}, which this command was not pointed at${how}`);
  }
  return {
    ...options,
    backend: place.kind,
    ...(place.prefix !== undefined && { mapPrefix: place.prefix }),
    ...(place.schema !== undefined && { postgresSchema: place.schema }),
  };
}

/** Which store a capability's options reach: one key per distinct store, so capabilities on one store share it. */
export function storeKey(options: CliConnectionOptions): string {
  return [options.backend, options.backend === 'postgres' ? options.postgresUrl : options.backend === 'redis' ? options.redisUrl : options.clusterName, options.postgresSchema ?? '', options.mapPrefix].join('\u0000');
}

/** What `status` prints of the layout: each store and the capabilities on it. */
export function describeLayout(layout: LiveLayout): string[] {
  const lines: string[] = [];
  const grouped = new Map<string, CapabilityState[]>();
  for (const capability of CAPABILITY_STATES) {
    const place = layout.places[capability];
    if (!place) continue;
    const where = describePlace(place);
    grouped.set(where, [...(grouped.get(where) ?? []), capability]);
  }
  for (const [where, capabilities] of grouped) lines.push(`${capabilities.join(', ')}: ${where}`);
  for (const capability of CAPABILITY_STATES) {
    const disputed = layout.disputed[capability];
    if (disputed !== undefined) lines.push(`${capability}: the live nodes disagree (${disputed})`);
  }
  return lines;
}

/** The layout as `--json` gives it. */
export function layoutJson(layout: LiveLayout): Record<string, unknown> {
  return { places: layout.places as StoreLayout, disputed: layout.disputed, nodes: layout.nodes };
}
