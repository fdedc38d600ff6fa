import { CAPABILITY_STATES, type CapabilityState } from '../core/capability-state';
import type { Presence } from './presence';

/** Where each capability of a node keeps its state, as it announces it in its presence ({@link Presence.stores}). */
export type StoreLayout = NonNullable<Presence['stores']>;

/**
 * Where one capability keeps its state: enough for an operator's tool to find the same store (its kind, its scope)
 * and to name it, never a password.
 */
export type StorePlace = StoreLayout[CapabilityState];

/** The capabilities `Presence.stores` names (written out there for the public API) are exactly {@link CapabilityState}. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const STORES_NAME_EVERY_CAPABILITY: Same<keyof StoreLayout, CapabilityState> = true;
void STORES_NAME_EVERY_CAPABILITY;

const PLACE_FIELDS = ['kind', 'address', 'schema', 'prefix'] as const;

/** Why `value` is not a {@link StoreLayout} as a node writes it, or `undefined` when it is one. */
export function storeLayoutProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'is not an object';
  const layout = value as Record<string, unknown>;
  for (const capability of CAPABILITY_STATES) {
    const place = layout[capability];
    if (place === null || typeof place !== 'object' || Array.isArray(place)) return `${capability} is not an object`;
    const fields = place as Record<string, unknown>;
    if (typeof fields.kind !== 'string' || fields.kind === '') return `${capability}.kind is not a non-empty string`;
    for (const field of PLACE_FIELDS) {
      if (fields[field] !== undefined && typeof fields[field] !== 'string') return `${capability}.${field} is not a string`;
    }
  }
  return undefined;
}

/** `layout` with only the fields a place has, in one order (what a presence stores). */
export function canonicalLayout(layout: Readonly<Record<string, Partial<Record<(typeof PLACE_FIELDS)[number], unknown>>>>): StoreLayout {
  return Object.fromEntries(CAPABILITY_STATES.map((capability) => {
    const place = layout[capability];
    return [capability, Object.fromEntries(PLACE_FIELDS.filter((field) => place[field] !== undefined).map((field) => [field, place[field]]))];
  })) as unknown as StoreLayout;
}

const KIND_NAMES: Readonly<Record<string, string>> = { postgres: 'PostgreSQL', redis: 'Redis', hazelcast: 'Hazelcast', memory: 'memory' };

/** A place as people read it: `Redis at 10.0.0.5:6379 (prefix gatekeeper)`, `PostgreSQL at db:5432/app (schema gatekeeper, prefix gatekeeper)`. */
export function describePlace(place: StorePlace): string {
  if (place.kind === 'memory') return "the nodes' own memory";
  const name = KIND_NAMES[place.kind] ?? `a ${place.kind} backend`;
  const scope = [place.schema !== undefined && `schema ${place.schema}`, place.prefix !== undefined && `prefix ${place.prefix}`].filter(Boolean).join(', ');
  return `${name}${place.address !== undefined ? ` at ${place.address}` : ''}${scope === '' ? '' : ` (${scope})`}`;
}

/** Whether two places name the same store by what is sure: kind and scope (an address differs by the way to it). */
export function sameScope(a: StorePlace, b: StorePlace): boolean {
  return a.kind === b.kind && a.schema === b.schema && a.prefix === b.prefix;
}
