import { formatDuration } from '../../core/duration';
import type { EarlierLife } from '../../core/errors/cluster-not-new.error';

/*
 * Declaring a Hazelcast cluster new (`nestjs-gatekeeper store init`), the partitions' part, pure: whether the
 * partitions' canaries show that some lost their data after the cluster held gatekeeper state.
 */

/** How far apart the partitions' canaries may have been first written and still count as one first start. */
export const CANARY_SPREAD_MS = 5 * 60_000;

/** A partition's canary as the rules read it. */
export interface CanaryReading {
  readonly createdAt: number;
  readonly fresh: boolean;
}

/**
 * The signs of an earlier life in the partitions' canaries. They are all written at a cluster's first start (one
 * node's connect, or a declaration), and only a partition that lost its data gets a canary later: so non-fresh
 * canaries first written far apart, or one first written after the cluster was declared new, mean partitions lost
 * their data while the cluster held gatekeeper state. (A non-fresh canary older than the fresh ones is what an
 * interrupted declaration leaves, and no sign.)
 */
export function canaryEvidence(canaries: readonly CanaryReading[]): EarlierLife[] {
  const evidence: EarlierLife[] = [];
  const stale = canaries.filter((c) => !c.fresh).map((c) => c.createdAt);
  const declared = canaries.filter((c) => c.fresh).map((c) => c.createdAt);
  if (stale.length >= 2) {
    const oldest = Math.min(...stale);
    const newest = Math.max(...stale);
    if (newest - oldest > CANARY_SPREAD_MS) {
      evidence.push({
        where: 'canaries',
        reason: `the partitions were first seen ${formatDuration(newest - oldest)} apart (${new Date(oldest).toISOString()} to ` +
          `${new Date(newest).toISOString()}): some lost their data (or an entry vanished) after the cluster held gatekeeper state`,
      });
    }
  }
  if (declared.length > 0 && stale.length > 0) {
    const newestDeclared = Math.max(...declared);
    const later = stale.filter((t) => t > newestDeclared).length;
    if (later > 0) {
      evidence.push({
        where: 'canaries',
        reason: `${later} partition(s) lost their data after the cluster was declared new (${new Date(newestDeclared).toISOString()})`,
      });
    }
  }
  return evidence;
}
