import type { HazelcastJsonValue, IMap } from 'hazelcast-client';
import { Predicates } from '../hazelcast-client.load';
import type { TaskRecord } from '../../../store/tasks/task';
import type { ClaimWatch, TaskWatcher } from '../../../store/tasks/task-store';
import { TaskWatches } from '../../../store/tasks/task-watches';

/** A store call with its deadline and failure mapping (the store's own). */
type Call = <T>(operation: () => Promise<T>, what: string) => Promise<T>;

/**
 * The task store's watch of pending work: one member-side entry listener whose predicate names the watched types
 * (`state = pending AND type IN (...)`), with values. A node hears only of work it has a handler for, and a process
 * that watches nothing (a submitter) registers no listener and hears nothing. When a watcher wants claims too, the
 * same listener also takes running tasks (`state = pending OR state = running AND claim.instance <> except`): one
 * predicate per update on the member either way, a node's own claims are not sent back to it (a node alone hears
 * none), and a claim is told to those watchers only. A change of types registers the new
 * listener before it removes the old, so no event falls in between (one may come twice: offering a task twice changes
 * nothing). Registrations run one at a time; a query waits for the one under way (see {@link listening}).
 */
export class HazelcastPendingListener {
  private map?: IMap<string, HazelcastJsonValue>;
  /** The member-side listener, and the watched types it was registered for. */
  private registered?: { readonly id: string; readonly types: string };
  private registering: Promise<void> = Promise.resolve();
  private readonly watchers = new TaskWatches(() => this.register());

  constructor(
    private readonly call: Call,
    /** The task an event carries, decoded once; `undefined` when it cannot be read. */
    private readonly decode: (key: string, value: unknown) => TaskRecord | undefined,
  ) {}

  /** Listens on `map` (the store connected), for the watches made so far and those to come. */
  attach(map: IMap<string, HazelcastJsonValue>): void {
    this.map = map;
    this.register();
  }

  /** See `TaskStore.watch`. */
  watch(listener: TaskWatcher, types?: readonly string[], claims?: ClaimWatch): () => void {
    return this.watchers.add(listener, types, claims);
  }

  /**
   * Events may have been missed (a reconnect: the members do not replay them): every watcher is told of work it could
   * not read, so a worker reads its candidates again at its next claim, as every view re-reads when changes may have
   * been missed.
   */
  missed(): void {
    this.watchers.missed();
  }

  /** See `TaskStore.listening`. */
  listening(): Promise<void> {
    // A registration that failed (the cluster was out of reach) is tried again now, once; the query goes ahead either
    // way, and new work it misses is found by the scan.
    return this.registering.catch(() => {
      this.register();
      return this.registering.catch(() => undefined);
    });
  }

  /** Stops listening (the store closes). */
  async close(): Promise<void> {
    this.watchers.clear();
    await this.registering.catch(() => undefined);
    this.map = undefined;
  }

  private register(): void {
    this.registering = this.registering.catch(() => undefined).then(() => this.reregister());
  }

  private async reregister(): Promise<void> {
    const map = this.map;
    if (!map) return;
    const wanted = this.watchers.types();
    const claims = this.watchers.claimsWanted();
    const key = `${claims === false ? '-' : claims ?? '*'}:${wanted === undefined ? '*' : [...wanted].sort().join('\n')}`;
    const old = this.registered;
    if (this.watchers.size === 0 || wanted?.size === 0) {
      this.registered = undefined;
      if (old) await this.call(() => map.removeEntryListener(old.id), 'stop listening for pending tasks').catch(() => undefined);
      return;
    }
    if (old?.types === key) return;
    const running = claims === false ? undefined : Predicates.equal('state', 'running');
    const pending = !running
      ? Predicates.equal('state', 'pending')
      : Predicates.or(Predicates.equal('state', 'pending'), claims === undefined ? running : Predicates.and(running, Predicates.notEqual('claim.instance', claims)));
    const predicate = wanted === undefined ? pending : Predicates.and(pending, Predicates.inPredicate('type', ...wanted));
    const heard = (key: string, value: unknown) => this.heard(key, value);
    const id = await this.call(() => map.addEntryListenerWithPredicate(
      { added: (e) => heard(e.key, e.value), updated: (e) => heard(e.key, e.value), merged: (e) => heard(e.key, e.value) },
      predicate,
      undefined,
      true,
    ), 'listen for pending tasks');
    this.registered = { id, types: key };
    if (old) await this.call(() => map.removeEntryListener(old.id), 'stop listening for pending tasks').catch(() => undefined);
  }

  /**
   * A task became pending, or was claimed: decoded once (only if someone wants its type) and told to those who want
   * it. One that cannot be read is told as pending work that could not be read (ask the store).
   */
  private heard(key: string, value: unknown): void {
    const type = key.slice(0, key.indexOf(':'));
    if (this.watchers.wants(type)) this.watchers.tell(type, key, this.decode(key, value));
  }
}
