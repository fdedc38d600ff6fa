import type { IMap } from 'hazelcast-client';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import { StoreCalls } from '../backends/hazelcast/store-call';
import type { JobHistory, NodeTicks } from './job-history';
import { decodeHistory, decodeTicks, encodeHistory, encodeTicks } from './job-history.codec';
import type { HistoryStore, StoredHistory } from './history-store';

/** How the Hazelcast history store finds its maps. */
export interface HazelcastHistoryStoreOptions {
  /** The process's shared connection. */
  connection: HazelcastConnection;
  /** Prefix of the IMaps: `<prefix>.job-runs` and `<prefix>.job-ticks`. Default `'gatekeeper'`. */
  mapPrefix?: string;
  /** Deadline of a call given none. Default 10 s. */
  callTimeoutMs?: number;
}

/**
 * Run history in two IMaps: `<prefix>.job-runs`, one canonical JSON entry per job, written by compare-and-set
 * (`replaceIfSame` on the exact text read, `putIfAbsent` for the first); `<prefix>.job-ticks`, one entry per
 * instance with its skipped-tick counts, written only by that instance and put with a time-to-live. No listeners:
 * the history is read when asked for, never pushed to every node.
 */
export class HazelcastHistoryStore implements HistoryStore {
  private jobs?: IMap<string, string>;
  private ticks?: IMap<string, string>;
  private opened = false;
  private readonly prefix: string;
  private readonly calls: StoreCalls;

  constructor(private readonly options: HazelcastHistoryStoreOptions) {
    this.prefix = options.mapPrefix ?? 'gatekeeper';
    this.calls = new StoreCalls(options.connection, 'schedules', options.callTimeoutMs ?? 10_000);
  }

  async connect(): Promise<void> {
    this.opened = true;
    try {
      const client = await this.options.connection.open();
      this.jobs = await this.calls.run(() => client.getMap<string, string>(`${this.prefix}.job-runs`), 'open the job history map');
      this.ticks = await this.calls.run(() => client.getMap<string, string>(`${this.prefix}.job-ticks`), 'open the skipped-ticks map');
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    this.jobs = undefined;
    this.ticks = undefined;
    if (!this.opened) return;
    this.opened = false;
    await this.options.connection.close();
  }

  async read(job: string, timeoutMs?: number): Promise<StoredHistory | undefined> {
    const jobs = this.require(this.jobs);
    const raw = await this.calls.run(() => jobs.get(job), `read the history of "${job}"`, timeoutMs);
    return raw === null || raw === undefined ? undefined : { raw, history: decodeHistory(job, raw) };
  }

  async readMany(jobs: readonly string[], timeoutMs?: number): Promise<Map<string, StoredHistory>> {
    const map = this.require(this.jobs);
    if (jobs.length === 0) return new Map();
    const entries = await this.calls.run(() => map.getAll([...jobs]), `read the histories of ${jobs.length} jobs`, timeoutMs);
    return new Map(entries.map(([job, raw]) => [job, { raw, history: decodeHistory(job, raw) }]));
  }

  async write(job: string, expected: StoredHistory | undefined, next: JobHistory, timeoutMs?: number): Promise<StoredHistory | undefined> {
    const jobs = this.require(this.jobs);
    const raw = encodeHistory(next);
    const what = `write the history of "${job}"`;
    const written = expected === undefined
      ? (await this.calls.run(() => jobs.putIfAbsent(job, raw), what, timeoutMs)) === null
      : await this.calls.run(() => jobs.replaceIfSame(job, expected.raw, raw), what, timeoutMs);
    return written ? { raw, history: next } : undefined;
  }

  async remove(job: string): Promise<void> {
    const jobs = this.require(this.jobs);
    await this.calls.run(() => jobs.delete(job), `remove the history of "${job}"`);
  }

  /**
   * Every job's history, one call (operators' listings, e.g. the CLI's `jobs list`; the nodes never list). Not on
   * {@link HistoryStore}: only tools that read the cluster directly need it.
   */
  async list(timeoutMs?: number): Promise<StoredHistory[]> {
    const jobs = this.require(this.jobs);
    const entries = await this.calls.run(() => jobs.entrySet(), 'list the job histories', timeoutMs);
    return entries.map(([job, raw]) => ({ raw, history: decodeHistory(job, raw) }));
  }

  async writeTicks(ticks: NodeTicks, ttlMs: number, timeoutMs?: number): Promise<void> {
    const map = this.require(this.ticks);
    await this.calls.run(() => map.set(ticks.instance, encodeTicks(ticks), Math.max(1_000, ttlMs)), `write the skipped ticks of ${ticks.instance}`, timeoutMs);
  }

  async readTicks(timeoutMs?: number): Promise<NodeTicks[]> {
    const map = this.require(this.ticks);
    const entries = await this.calls.run(() => map.entrySet(), 'read skipped ticks', timeoutMs);
    return entries.map(([key, raw]) => decodeTicks(key, raw));
  }

  operationCount(): number {
    return this.calls.count();
  }

  private require(map: IMap<string, string> | undefined): IMap<string, string> {
    if (!map) throw new StoreUnavailableError('the history store is not connected');
    return map;
  }
}
