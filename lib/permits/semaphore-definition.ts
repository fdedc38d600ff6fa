import type { DurationInput } from '../core/duration';
import { MAX_NAME_LENGTH } from '../core/names';

export type { DurationInput };

/** A semaphore definition as users write it (module options, service, admin tools). */
export interface SemaphoreDefinitionInput {
  /** The semaphore's name: 1 to 200 characters. */
  name: string;
  /** How many acquirers may hold a permit at once. `0` pauses the semaphore. Default `1`. */
  permits?: number;
  /** How long a permit lives unless refreshed. Required. */
  duration: DurationInput;
  /** Regex (full match) the node's group must match. Default `'.*'` (any group). */
  groupPattern?: string;
  /** Regex (full match) the node's acquirer name must match. Default `'.*'` (any acquirer). */
  acquirerPattern?: string;
}

/** A validated semaphore definition, as stored in the cluster. */
export interface SemaphoreDefinition {
  /** The semaphore's name. */
  readonly name: string;
  /** How many acquirers may hold a permit at once; `0` means paused. */
  readonly permits: number;
  /** How long a permit lives unless refreshed, in milliseconds. */
  readonly durationMs: number;
  /** Regex (full match) for the node's group. */
  readonly groupPattern: string;
  /** Regex (full match) for the node's acquirer name. */
  readonly acquirerPattern: string;
  /** Set while paused by `pause()`: the permits that `resume()` restores. */
  readonly pausedFrom?: number;
  /**
   * Set by a group migration: what it replaced, so that `undoMigration()` can put it back. Kept by edits that
   * leave the group pattern alone (pause, resume, permits); an edit of the group pattern marks it `editedAt`, and
   * undo then leaves the semaphore alone. A later migration replaces it; an undo removes it.
   */
  readonly migratedFrom?: {
    /** The group pattern before the migration: what undo restores. */
    readonly groupPattern: string;
    /** The migration's source group (`--from-group`). */
    readonly fromGroup: string;
    /** The migration's target group (`--to-group`). */
    readonly toGroup: string;
    /** When the migration wrote it (epoch ms, the migrating node's clock). */
    readonly at: number;
    /**
     * When the group pattern was edited after the migration (epoch ms): the pattern is no longer the one the
     * migration wrote, so undo skips the semaphore rather than overwrite the edit.
     */
    readonly editedAt?: number;
  };
}

/** What the last group migration of a semaphore replaced: its {@link SemaphoreDefinition.migratedFrom}. */
export type GroupMigrationMemory = NonNullable<SemaphoreDefinition['migratedFrom']>;

/** The most characters a semaphore name may have: any name's most (lib/core/names). */
export const MAX_SEMAPHORE_NAME_LENGTH = MAX_NAME_LENGTH;
