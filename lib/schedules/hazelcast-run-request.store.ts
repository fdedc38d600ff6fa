import type { IMap } from 'hazelcast-client';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import { StoreCalls } from '../backends/hazelcast/store-call';
import { decodeRequest, encodeRequest, type RunRequest } from './run-request';
import type { RunRequestStore, StoredRequest } from './run-request-store';

/** How the Hazelcast request store finds its map. */
export interface HazelcastRunRequestStoreOptions {
  connection: HazelcastConnection;
  /** Prefix of the IMap `<prefix>.job-requests`. Default `'gatekeeper'`. */
  mapPrefix?: string;
  /** Deadline of a call given none. Default 10 s. */
  callTimeoutMs?: number;
}

/** Requests left behind by a requester that died are dropped by the member after this long. */
const REQUEST_TTL_MS = 60 * 60_000;

/**
 * "Run now" requests in the IMap `<prefix>.job-requests`, one canonical JSON entry per request, written by
 * compare-and-set; every node listens (requests are rare, and each carries its value, so a node decides without
 * asking). The requester removes its request once answered.
 */
export class HazelcastRunRequestStore implements RunRequestStore {
  private map?: IMap<string, string>;
  private listenerId?: string;
  private opened = false;
  private readonly calls: StoreCalls;
  private readonly mapName: string;

  constructor(private readonly options: HazelcastRunRequestStoreOptions) {
    this.mapName = `${options.mapPrefix ?? 'gatekeeper'}.job-requests`;
    this.calls = new StoreCalls(options.connection, 'schedules', options.callTimeoutMs ?? 10_000);
  }

  async connect(heard: (request: RunRequest) => void): Promise<void> {
    this.opened = true;
    try {
      const client = await this.options.connection.open();
      const map = await this.calls.run(() => client.getMap<string, string>(this.mapName), 'open the run request map');
      const hear = (key: string, raw: string | null | undefined) => {
        if (typeof raw !== 'string') return;
        try {
          heard(decodeRequest(key, raw));
        } catch {
          // An unreadable request is nobody's to run.
        }
      };
      this.listenerId = await this.calls.run(() => map.addEntryListener({
        added: (e) => hear(e.key, e.value),
        updated: (e) => hear(e.key, e.value),
      }, undefined, true), 'listen for run requests');
      this.map = map;
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.listenerId && this.map) await this.map.removeEntryListener(this.listenerId).catch(() => undefined);
    this.listenerId = undefined;
    this.map = undefined;
    if (!this.opened) return;
    this.opened = false;
    await this.options.connection.close();
  }

  async create(request: RunRequest, timeoutMs?: number): Promise<boolean> {
    const map = this.require();
    return (await this.calls.run(() => map.putIfAbsent(request.id, encodeRequest(request), REQUEST_TTL_MS), `ask to run "${request.job}" now`, timeoutMs)) === null;
  }

  async read(id: string, timeoutMs?: number): Promise<StoredRequest | undefined> {
    const map = this.require();
    const raw = await this.calls.run(() => map.get(id), `read run request ${id}`, timeoutMs);
    return typeof raw === 'string' ? { raw, request: decodeRequest(id, raw) } : undefined;
  }

  async compareAndSet(id: string, expected: StoredRequest, next: RunRequest, timeoutMs?: number): Promise<boolean> {
    const map = this.require();
    return this.calls.run(() => map.replaceIfSame(id, expected.raw, encodeRequest(next)), `update run request ${id}`, timeoutMs);
  }

  async remove(id: string): Promise<void> {
    const map = this.require();
    await this.calls.run(() => map.delete(id), `remove run request ${id}`);
  }

  private require(): IMap<string, string> {
    if (!this.map) throw new StoreUnavailableError('the run request store is not connected');
    return this.map;
  }
}
