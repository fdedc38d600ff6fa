import type { Presence } from './presence';
import { canonicalLayout, storeLayoutProblem, type StoreLayout } from './store-place';

/** Format of a stored presence value; a reader refuses formats it does not know. */
const FORMAT = 1;

/** The stored form of a presence: canonical JSON with its format number. */
export function encodePresence(presence: Presence): string {
  const { instance, acquirer, group, startedAt, version, httpAddress, stores, refreshedAt, expiresAt } = presence;
  return JSON.stringify({
    v: FORMAT, instance, acquirer, group, startedAt, version, ...(httpAddress !== undefined && { httpAddress }),
    ...(stores !== undefined && { stores: canonicalLayout(stores) }), refreshedAt, expiresAt,
  });
}

/** Reads a stored presence; returns why it cannot, instead of throwing, so one bad value never hides the others. */
export function decodePresence(key: string, raw: string): Presence | { unreadable: string } {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return { unreadable: 'not JSON' };
  }
  if (value === null || typeof value !== 'object') return { unreadable: 'not an object' };
  if (value.v !== FORMAT) return { unreadable: `format ${JSON.stringify(value.v)}, expected ${FORMAT}` };
  for (const field of ['instance', 'acquirer', 'group', 'version'] as const) {
    if (typeof value[field] !== 'string' || value[field] === '') return { unreadable: `${field} is not a non-empty string` };
  }
  for (const field of ['startedAt', 'refreshedAt', 'expiresAt'] as const) {
    if (!Number.isFinite(value[field])) return { unreadable: `${field} is not a number` };
  }
  if (value.instance !== key) return { unreadable: `instance "${String(value.instance)}" is not its key "${key}"` };
  if (value.httpAddress !== undefined && typeof value.httpAddress !== 'string') return { unreadable: 'httpAddress is not a string' };
  const layoutIssue = value.stores === undefined ? undefined : storeLayoutProblem(value.stores);
  if (layoutIssue !== undefined) return { unreadable: `stores: ${layoutIssue}` };
  return {
    instance: value.instance as string, acquirer: value.acquirer as string, group: value.group as string,
    startedAt: value.startedAt as number, version: value.version as string,
    ...(value.httpAddress !== undefined && { httpAddress: value.httpAddress as string }),
    ...(value.stores !== undefined && { stores: canonicalLayout(value.stores as StoreLayout) }),
    refreshedAt: value.refreshedAt as number, expiresAt: value.expiresAt as number,
  };
}

/** Decodes stored presences for a store, reporting each unreadable value once (not at every event and re-read). */
export class PresenceReader {
  private readonly reported = new Map<string, string>();

  constructor(private readonly report: () => ((key: string, reason: string) => void) | undefined) {}

  /** The presence stored under `instance`, or none (reported once) when its value cannot be read. */
  read(instance: string, raw: string): Presence[] {
    const decoded = decodePresence(instance, raw);
    if (!('unreadable' in decoded)) return [decoded];
    if (this.reported.get(instance) !== raw) {
      this.reported.set(instance, raw);
      this.report()?.(instance, decoded.unreadable);
    }
    return [];
  }
}
