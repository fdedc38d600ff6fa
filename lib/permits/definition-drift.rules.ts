import type { SemaphoreDefinition } from './semaphore-definition';

/** One setting on which the module's definition and the stored one differ: its CLI option, and each side's value. */
export interface DefinitionDrift {
  readonly field: 'permits' | 'duration' | 'groupPattern' | 'acquirerPattern';
  /** The module's value (milliseconds for `duration`). */
  readonly code: number | string;
  /** The stored value (for `permits` of a paused semaphore: the permits its resume restores). */
  readonly stored: number | string;
}

/**
 * Where the module's definition of a semaphore differs from the one the store keeps, setting by setting. A pause is an
 * operator's, not a difference: a paused semaphore's permits are compared as its resume would restore them. Empty when
 * they agree. Pure.
 */
export function definitionDrift(code: SemaphoreDefinition, stored: SemaphoreDefinition): DefinitionDrift[] {
  const drift: DefinitionDrift[] = [];
  const storedPermits = stored.pausedFrom ?? stored.permits;
  if (code.permits !== storedPermits) drift.push({ field: 'permits', code: code.permits, stored: storedPermits });
  if (code.durationMs !== stored.durationMs) drift.push({ field: 'duration', code: code.durationMs, stored: stored.durationMs });
  if (code.groupPattern !== stored.groupPattern) drift.push({ field: 'groupPattern', code: code.groupPattern, stored: stored.groupPattern });
  if (code.acquirerPattern !== stored.acquirerPattern) drift.push({ field: 'acquirerPattern', code: code.acquirerPattern, stored: stored.acquirerPattern });
  return drift;
}
