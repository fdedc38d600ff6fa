import type { MembershipChanges, Presence, PresenceIdentity } from './presence';

/** The announcement an instance writes at `now`: valid for `ttlMs` unless renewed. */
export function announcement(self: PresenceIdentity, now: number, ttlMs: number): Presence {
  return { ...self, refreshedAt: now, expiresAt: now + ttlMs };
}

/**
 * Whether another node must still count `presence` as live at `now`: until its expiry plus the clock-skew bound,
 * since the expiry was written with the announcer's clock.
 */
export function isLive(presence: Presence, now: number, skewMs: number): boolean {
  return presence.expiresAt + skewMs > now;
}

/** The live instances among `presences`, oldest first (then by instance id), so every node lists them alike. */
export function livePresences(presences: Iterable<Presence>, now: number, skewMs: number): Presence[] {
  return [...presences]
    .filter((p) => isLive(p, now, skewMs))
    .sort((a, b) => a.startedAt - b.startedAt || (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0));
}

/** Acquirer names that more than one live instance uses, with those instances. */
export function nameClashes(live: readonly Presence[]): Map<string, Presence[]> {
  const byName = new Map<string, Presence[]>();
  for (const p of live) byName.set(p.acquirer, [...(byName.get(p.acquirer) ?? []), p]);
  return new Map([...byName].filter(([, instances]) => instances.length > 1));
}

/** Who is in `after` and not in `before` (joined), and the reverse (left), by instance id. */
export function membershipChanges(before: readonly Presence[], after: readonly Presence[]): MembershipChanges {
  const had = new Set(before.map((p) => p.instance));
  const has = new Set(after.map((p) => p.instance));
  return { joined: after.filter((p) => !had.has(p.instance)), left: before.filter((p) => !has.has(p.instance)) };
}
