import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { RecordMap, Unwatch } from '../store/record-map';
import type { StoreBackend } from '../store/store-backend';
import { decodeRequest, encodeRequest, type RunRequest } from './run-request';
import type { RunRequestStore, StoredRequest } from './run-request-store';

/** The record map "run now" requests wait in, one record per request. */
export const RUN_REQUEST_MAP = 'job-requests';

/** Requests left behind by a requester that died are dropped by the store after this long (a garbage-collection aid). */
const REQUEST_TTL_MS = 60 * 60_000;

/**
 * "Run now" requests on any backend of the store contract: one canonical JSON record per request, written by
 * compare-and-set; every node watches the map (requests are rare, and each change carries its value, so a node
 * decides without asking). The requester removes its request once answered.
 */
export class RunRequestRecordStore implements RunRequestStore {
  private map?: RecordMap;
  private unwatch?: Unwatch;
  private opened = false;

  constructor(private readonly backend: StoreBackend) {}

  async connect(heard: (request: RunRequest) => void): Promise<void> {
    // Held from the call on: a close() while the backend is still opening makes it give up.
    this.opened = true;
    try {
      await this.backend.open();
      const map = await this.backend.map(RUN_REQUEST_MAP);
      this.unwatch = await map.watch({
        changed: (id, raw) => {
          if (raw === null) return;
          try {
            heard(decodeRequest(id, raw));
          } catch {
            // An unreadable request is nobody's to run.
          }
        },
        missed: () => undefined, // the requester nudges and polls its request: a missed event costs time, not a run
      });
      this.map = map;
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.unwatch?.().catch(() => undefined);
    this.unwatch = undefined;
    this.map = undefined;
    if (!this.opened) return;
    this.opened = false;
    await this.backend.close();
  }

  create(request: RunRequest, timeoutMs?: number): Promise<boolean> {
    return this.require().create(request.id, encodeRequest(request), { timeoutMs, ttlMs: REQUEST_TTL_MS });
  }

  async read(id: string, timeoutMs?: number): Promise<StoredRequest | undefined> {
    const record = await this.require().get(id, { timeoutMs });
    return record && { raw: record.value, request: decodeRequest(id, record.value) };
  }

  compareAndSet(id: string, expected: StoredRequest, next: RunRequest, timeoutMs?: number): Promise<boolean> {
    return this.require().replace({ key: id, value: expected.raw }, encodeRequest(next), { timeoutMs });
  }

  async remove(id: string): Promise<void> {
    await this.require().delete(id);
  }

  private require(): RecordMap {
    if (!this.map) throw new StoreUnavailableError('the run request store is not connected');
    return this.map;
  }
}
