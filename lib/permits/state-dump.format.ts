import type { SemaphoreStatus } from './semaphore-status';

/**
 * One compact, grep-friendly line per semaphore for the periodic state dump, e.g.
 * `billing permits=1 holders=[app-3001@production token=1795312401118000 expires=+2.4s] lastToken=1795312401118000 denied=4`.
 */
export function formatStateLine(status: SemaphoreStatus, now: number, denied: number): string {
  const permits = status.definition ? String(status.definition.permits) : 'undefined';
  const group = status.definition && status.definition.groupPattern !== '.*' ? ` group=/${status.definition.groupPattern}/` : '';
  const holders = status.permits
    .map((p) => `${p.acquirer}@${p.group} token=${p.fencingToken} expires=+${((p.expiresAt - now) / 1000).toFixed(1)}s${p.revokedAt ? ' revoked' : ''}${p.released ? ' released' : ''}`)
    .join(', ');
  const recovering = status.recoveringUntil ? ` recovering=+${((status.recoveringUntil - now) / 1000).toFixed(1)}s` : '';
  return `${status.name} permits=${permits}${group} holders=[${holders}] lastToken=${status.lastToken ?? '-'}${recovering} denied=${denied}`;
}
