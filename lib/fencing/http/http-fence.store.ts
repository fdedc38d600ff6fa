import { nameProblem } from '../../core/names';
import { invalidDefinition } from '../../core/errors/input.errors';
import { MapHold } from '../../store/map-hold';
import { updateRecord } from '../../store/read-decide-write';
import type { StoreBackend } from '../../store/store-backend';
import { writeIdsOf } from '../../store/write-ids';
import { MAX_RESOURCE_LENGTH } from '../fencing-token.rules';

/** The record map a receiving service keeps its fences in: per resource, the highest token a call was accepted with. */
export const HTTP_FENCE_MAP = 'fences';

/** What a fence said to a call's token. */
export type FenceVerdict = { readonly accepted: true } | { readonly accepted: false; readonly newer: number };

/**
 * The fences of a service that receives fenced HTTP calls (`@Fenced(resource)`), on its own backend over the store
 * contract: per resource, the highest token accepted, raised by compare-and-set, so two instances of the service
 * refuse the same stale calls. As durable as that backend (the memory backend: one process's).
 */
export class HttpFenceStore {
  private readonly hold: MapHold;
  private opening?: Promise<unknown>;

  constructor(private readonly backend: StoreBackend) {
    this.hold = new MapHold(backend, HTTP_FENCE_MAP, 'fence');
  }

  /**
   * Raises `resource`'s fence to `token` unless a higher one is there (an equal one is the same holder calling
   * again): accepted, or refused with the newer token.
   */
  async accept(resource: string, token: number): Promise<FenceVerdict> {
    const problem = nameProblem(resource, { max: MAX_RESOURCE_LENGTH });
    if (problem) throw invalidDefinition(undefined, 'resource', problem, '@Fenced');
    this.opening ??= this.hold.open();
    await this.opening;
    return updateRecord<FenceVerdict>(this.hold.map(), resource, (current) => {
      const highest = current ? (JSON.parse(current.value) as { token: number }).token : 0;
      if (token < highest) return { result: { accepted: false, newer: highest } };
      if (token === highest) return { result: { accepted: true } };
      return { result: { accepted: true }, write: JSON.stringify({ token, writeId: writeIdsOf(this.backend).next() }) };
    });
  }

  /** Lets go of the map (and the backend, if this store opened it). */
  async close(): Promise<void> {
    this.opening = undefined;
    await this.hold.close();
  }
}
