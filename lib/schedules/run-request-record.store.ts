import type { RecordMap } from '../store/record-map';
import { MapHold } from '../store/map-hold';
import type { StoreBackend } from '../store/store-backend';
import { decodeRequest, encodeRequest, type RunRequest } from './run-request';
import type { RequestDecision, RunRequestStore, StoredRequest } from './run-request-store';
import type { Deadline } from '../core/deadline';
import { updateRecord } from '../store/read-decide-write';

/** The record map "run now" requests wait in, one record per request. */
export const RUN_REQUEST_MAP = 'job-requests';

/** Requests left behind by a requester that died are dropped by the store after this long (a garbage-collection aid). */
const REQUEST_TTL_MS = 60 * 60_000;

/**
 * "Run now" requests on any backend of the store contract: one canonical JSON record per request, written by
 * compare-and-set; every node watches the map (requests are rare, and each change carries its value, so a node
 * decides without asking), and reads every request again when the feed says changes may have been missed. The
 * requester removes its request once answered.
 */
export class RunRequestRecordStore implements RunRequestStore {
  private readonly hold: MapHold;

  constructor(backend: StoreBackend) {
    this.hold = new MapHold(backend, RUN_REQUEST_MAP, 'run request');
  }

  async connect(heard: (request: RunRequest) => void): Promise<void> {
    const hear = (id: string, raw: string) => {
      try {
        heard(decodeRequest(id, raw));
      } catch {
        // An unreadable request is nobody's to run.
      }
    };
    await this.hold.open({
      changed: (id, raw) => {
        if (raw !== null) hear(id, raw);
      },
      // Changes may have been missed: every request is read again and heard (as every view re-reads then), so one whose
      // event was lost is answered now, not at the requester's next nudge. Nothing to read while disconnected.
      missed: (reason) => {
        if (reason === 'disconnected') return;
        void this.hold.map().list().then((records) => {
          for (const { key, value } of records) hear(key, value);
        }).catch(() => undefined); // the requester's nudges still repeat its request
      },
    });
  }

  async close(): Promise<void> {
    await this.hold.close();
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

  update<R>(id: string, decide: (current: RunRequest | undefined) => RequestDecision<R>, bounds: { attempts: number; deadline: Deadline }): Promise<R> {
    return updateRecord(this.require(), id, (current) => {
      const decision = decide(current && decodeRequest(id, current.value));
      return decision.next === undefined ? { result: decision.result } : { result: decision.result, write: encodeRequest(decision.next) };
    }, bounds);
  }

  async remove(id: string): Promise<void> {
    await this.require().delete(id);
  }

  private require(): RecordMap {
    return this.hold.map();
  }
}
