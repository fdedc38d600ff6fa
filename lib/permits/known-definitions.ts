import type { Clock } from '../core/clock';
import type { Log } from '../core/log';
import { fullMatch } from '../core/pattern';
import type { HeldTick } from './definition.validator';
import type { Holder, NodeIdentity } from './permit';
import { definitionDrift } from './definition-drift.rules';
import { admittedBy, livePermits } from './permit.rules';
import type { PermitStore } from './permit-store';
import { permitMessages as messages } from './permits.messages';
import type { SemaphoreDefinition } from './semaphore-definition';
import type { SemaphoreEdits } from './semaphore-edits';
import type { SemaphoreEntry } from './semaphore-entry';
import { describeInstances } from './unheld-semaphore.monitor';
import { invalidDefinition } from '../core/errors/input.errors';
import { unknownSemaphore } from './errors/semaphore.errors';

/**
 * What start-up reads of a method that runs under a permit of its semaphore (`@ClusterSingleton`, whose options are
 * the schedules capability's and include these): the semaphore, the duration to define it with, and how runs hold it.
 */
export interface DecoratedSemaphore {
  readonly semaphore: string;
  /** Already validated (a positive duration in ms) when the decorator was applied: defining with it parses nothing again. */
  readonly durationMs: number | undefined;
  readonly mode: 'hold' | 'release';
  /** Release mode only; 0 otherwise. */
  readonly lockAtLeastForMs: number;
}

/** Where the decorated methods are found (the module's explorer), under the key their decorator records them by. */
export interface DecoratedMethods {
  discover<T>(key: string): ReadonlyArray<{ readonly where: string; readonly metadata: T; readonly method: object }>;
}

/** What the definitions of this node come from and are checked against (the module's resolved options). */
export interface KnownDefinitionsOptions {
  readonly holder: Holder;
  /** The module's definitions, validated. */
  readonly definitions: readonly SemaphoreDefinition[];
  readonly definitionsPolicy: 'keep' | 'overwrite';
  readonly autoDefine: boolean;
  readonly clockSkewMs: number;
  readonly permitClock: Clock;
}

/** How start-up finds the decorated methods and their ticks, and where it says what it found. */
export interface KnownDefinitionsParts {
  readonly methods: DecoratedMethods;
  /** The metadata key `@ClusterSingleton` records a {@link DecoratedSemaphore} under. */
  readonly key: string;
  /** The interval of a method's `@Interval` schedule, if it has one. */
  readonly intervalMs: (method: object) => number | undefined;
  readonly log: Log;
  /** The permits' backend kind, for what a recovery line names (`undefined`: a permit store of the user's). */
  readonly backend?: string;
}

/** The definition `@ClusterSingleton(name, duration)` stands for when none exists: one permit, any group and acquirer. */
export function autoDefinition(name: string, durationMs: number): SemaphoreDefinition {
  return { name, permits: 1, durationMs, groupPattern: '.*', acquirerPattern: '.*' };
}

/**
 * What this node knows of the definitions and does with them: publishes the module's definitions and the
 * decorated semaphores' at boot, checks the decorators' settings, remembers every definition it has seen, and
 * puts back the ones whose entries were lost (a cluster restart, or partitions lost with their members), with
 * the recovery wait that keeps a rebuilt entry from granting while a permit of the lost one may still be held.
 */
export class KnownDefinitions {
  private readonly autoDefined = new Map<string, SemaphoreDefinition>();
  /** The shortest held tick of this node's jobs per semaphore (told by the schedules, through the permits runtime). */
  heldTicks?: (semaphore: string) => HeldTick | undefined;
  /**
   * The newest definition seen per name, with the revision it was seen at (an operator's live edit beats the options)
   * and, when the entry was a rebuilt one, since when the loss it was rebuilt after counts (`rebuilt.lostSince`).
   */
  private readonly remembered = new Map<string, { definition: SemaphoreDefinition | null; revision: number; rebuiltAfter?: number }>();
  /** The longest duration ever seen per name: the recovery wait must outlast any permit of the lost entry. */
  private readonly longest = new Map<string, number>();
  private readonly clashes = new Set<string>();
  /** The semaphores this node's options and decorators use: what the runs-nowhere check looks at. */
  private readonly used = new Set<string>();
  private unwatch?: () => void;
  private edits?: SemaphoreEdits;

  constructor(
    private readonly options: KnownDefinitionsOptions,
    private readonly store: PermitStore,
    private readonly parts: KnownDefinitionsParts,
  ) {}

  /** Publishes definitions, defines the decorated semaphores and checks their settings. */
  async start(edits: SemaphoreEdits): Promise<void> {
    const { log } = this.parts;
    this.edits = edits;
    this.unwatch?.();
    this.unwatch = this.store.watch((name, entry) => this.remember(name, entry));
    for (const { name, entry } of this.store.known()) this.remember(name, entry);
    for (const definition of this.options.definitions) {
      const wrote = await edits.define(definition, { overwrite: this.options.definitionsPolicy === 'overwrite', graceDurationMs: this.knownDurationMs(definition.name) });
      if (!wrote && this.options.definitionsPolicy === 'keep') await this.tellDrift(definition, edits);
    }
    for (const { name } of this.options.definitions) this.used.add(name);
    const notRunnable = new Set<string>();
    const told = new Set<string>();
    /** The method whose duration auto-defined a semaphore in this start-up. */
    const definedBy = new Map<string, string>();
    for (const { where, metadata: options, method } of this.parts.methods.discover<DecoratedSemaphore>(this.parts.key)) {
      this.used.add(options.semaphore);
      // The view may not have a definition another node wrote a moment ago: ask the cluster before deciding.
      let definition = this.store.peek(options.semaphore)?.entry?.definition ?? (await edits.current(options.semaphore).catch(() => undefined));
      if (!definition) {
        if (!this.options.autoDefine) throw unknownSemaphore(options.semaphore, where);
        if (options.durationMs === undefined) throw invalidDefinition(options.semaphore, 'duration', messages.missingDuration(where));
        definition = autoDefinition(options.semaphore, options.durationMs);
        if (await edits.define(definition, { graceDurationMs: this.knownDurationMs(definition.name) })) {
          log.log(messages.autoDefined(definition.name, where, definition.durationMs));
          definedBy.set(definition.name, where);
        }
        this.autoDefined.set(definition.name, definition);
      } else if (options.durationMs !== undefined && definition.durationMs !== options.durationMs && !told.has(definition.name)) {
        // The one source of truth is the stored definition: said once at start-up when the code says otherwise, at
        // warn (the job's lease is not the one its decorator asks for).
        told.add(definition.name);
        const first = definedBy.get(definition.name);
        log.warn(first === undefined
          ? messages.definitionInForce(definition.name, where, options.durationMs, definition.durationMs)
          : messages.sharedDurationInForce(definition.name, where, first, options.durationMs, definition.durationMs));
      }
      this.check(where, options, method, definition);
      if (!notRunnable.has(definition.name)) {
        const reason = this.excludes(definition);
        if (reason) {
          notRunnable.add(definition.name);
          log.warn(messages.neverRunsHere(where, definition.name, this.options.holder, reason));
        }
      }
    }
  }

  /**
   * The module's definition of a semaphore the store kept (`definitionsPolicy: 'keep'`): said once at start, at warn,
   * when the two differ, with both values, the policy and the command that applies the module's. Nothing is changed.
   */
  private async tellDrift(definition: SemaphoreDefinition, edits: SemaphoreEdits): Promise<void> {
    const stored = this.store.peek(definition.name)?.entry?.definition ?? (await edits.current(definition.name).catch(() => undefined));
    if (!stored) return;
    const drift = definitionDrift(definition, stored);
    if (drift.length > 0) this.parts.log.warn(messages.moduleDefinitionNotApplied(definition.name, drift, stored.pausedFrom !== undefined, this.parts.backend));
  }

  /**
   * Warns, once each, of the semaphores this node uses (options, decorators) that no live instance can run: not
   * paused, yet their patterns admit none of the instances presence confirms live. Called once presence has a view.
   */
  warnRunsNowhere(live: readonly NodeIdentity[] | undefined): void {
    if (!live || live.length === 0) return;
    for (const definition of this.runsNowhere(live)) this.parts.log.warn(messages.runsNowhere(definition.name, definition, describeInstances(live), live.length));
  }

  /**
   * The semaphores this node uses (options, decorators) that none of the `live` instances can run: not paused, yet
   * their patterns admit none of them.
   */
  runsNowhere(live: readonly NodeIdentity[]): SemaphoreDefinition[] {
    const nowhere: SemaphoreDefinition[] = [];
    for (const name of this.used) {
      const definition = this.store.peek(name)?.entry?.definition ?? this.knownDefinition(name);
      if (definition && definition.permits > 0 && admittedBy(definition, live).length === 0) nowhere.push(definition);
    }
    return nowhere;
  }

  /** The semaphores this node uses that are paused (no permits): they run nowhere, on purpose. */
  paused(): string[] {
    return [...this.used].filter((name) => (this.store.peek(name)?.entry?.definition ?? this.knownDefinition(name))?.permits === 0);
  }

  /** Puts back the definition of `name` if this node knows one; returns whether the entry now exists again. */
  async recover(edits: SemaphoreEdits, name: string): Promise<boolean> {
    const definition = this.knownDefinition(name);
    if (!definition) return false;
    const wrote = await edits.define(definition, { graceDurationMs: this.knownDurationMs(name) });
    if (wrote) this.parts.log.warn(messages.recovered(name, this.parts.backend));
    return true;
  }

  /** Puts back every lost entry this node knows a definition of. */
  async recoverAll(edits: SemaphoreEdits, names: string[]): Promise<void> {
    for (const name of names) await this.recover(edits, name).catch((error) => this.parts.log.warn(messages.recoveryFailed(name, error)));
  }

  /**
   * The definition this node would put back for `name`: the newest it saw, else its module options', else the
   * one its decorator auto-defined. `undefined` for one it never knew, or saw removed.
   */
  knownDefinition(name: string): SemaphoreDefinition | undefined {
    const seen = this.remembered.get(name);
    if (seen) return seen.definition ?? undefined;
    return this.options.definitions.find((d) => d.name === name) ?? this.autoDefined.get(name);
  }

  /** The longest duration this node has seen `name` defined with (0 if none). */
  knownDurationMs(name: string): number {
    return this.longest.get(name) ?? 0;
  }

  /** Stops watching the store. */
  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }

  /** Why this node's identity can never be granted `definition` (a pattern that does not admit it), if so. */
  private excludes(definition: SemaphoreDefinition): string | undefined {
    const { group, acquirer } = this.options.holder;
    if (!fullMatch(definition.groupPattern, group)) return `its groupPattern "${definition.groupPattern}" does not admit group "${group}"`;
    if (!fullMatch(definition.acquirerPattern, acquirer)) {
      return `its acquirerPattern "${definition.acquirerPattern}" does not admit acquirer "${acquirer}"`;
    }
    return undefined;
  }

  /**
   * Warns when an edit from anywhere (the CLI too, which knows no jobs and cannot refuse it) took the duration of a
   * semaphore a job here keeps from tick to tick from above its tick to below it: the job now moves between nodes.
   */
  private tellShorterThanTick(name: string, before: SemaphoreDefinition | undefined, after: SemaphoreDefinition | undefined): void {
    const tick = this.heldTicks?.(name);
    if (!tick || !before || !after || before.durationMs < tick.tickMs || after.durationMs >= tick.tickMs) return;
    this.parts.log.warn(messages.durationBelowTick(name, after.durationMs, tick.job, tick.tickMs));
  }

  private remember(name: string, entry: SemaphoreEntry | undefined): void {
    if (!entry) return; // lost, not removed: keep what we knew, to put it back
    const mine = this.remembered.get(name);
    if (entry.definition) this.longest.set(name, Math.max(this.longest.get(name) ?? 0, entry.definition.durationMs));
    const rebuilt = entry.rebuilt && entry.graceUntil !== undefined && entry.graceUntil > this.options.permitClock.now() ? entry.rebuilt : undefined;
    if (rebuilt) {
      // Rebuilt by a node that may have known less than this one: bring in a longer wait or a newer definition. Only
      // what this node saw before the rebuild is knowledge the rebuild may have lacked: a definition it saw on the
      // rebuilt entry itself (its own auto-define, an operator's edit) is already the entry's history, and bringing
      // it back would undo every later edit (an operator's pause) until the wait is over.
      const longestMs = this.longest.get(name) ?? 0;
      const knowsNewer = mine !== undefined && mine.rebuiltAfter !== rebuilt.lostSince && mine.revision > rebuilt.fromRevision;
      if (knowsNewer || rebuilt.lostSince + longestMs + 2 * this.options.clockSkewMs > entry.graceUntil!) {
        const known = knowsNewer ? mine : { definition: entry.definition, revision: rebuilt.fromRevision };
        void this.edits?.converge(name, { ...known, longestMs }).catch((error) => this.parts.log.warn(messages.recoveryFailed(name, error)));
      }
      if (knowsNewer) return;
    }
    this.tellShorterThanTick(name, mine?.definition ?? undefined, entry.definition ?? undefined);
    this.remembered.set(name, { definition: entry.definition, revision: entry.revision, ...(rebuilt && { rebuiltAfter: rebuilt.lostSince }) });
    const { acquirer, instance } = this.options.holder;
    for (const permit of livePermits(entry.permits, this.options.permitClock.now())) {
      if (permit.acquirer !== acquirer || permit.instance === instance || this.clashes.has(permit.instance)) continue;
      this.clashes.add(permit.instance);
      this.parts.log.warn(messages.nameClash(acquirer, permit.instance, name));
    }
  }

  private check(where: string, { mode, lockAtLeastForMs }: DecoratedSemaphore, method: object, definition: SemaphoreDefinition): void {
    const skewMs = this.options.clockSkewMs;
    if (definition.durationMs <= 2 * skewMs) this.parts.log.warn(messages.durationBelowSkew(definition.name, definition.durationMs, skewMs));
    if (mode !== 'release') return;
    const intervalMs = this.parts.intervalMs(method);
    if (intervalMs !== undefined && lockAtLeastForMs + skewMs >= intervalMs) {
      this.parts.log.warn(messages.lockAtLeastForTooLong(where, lockAtLeastForMs, skewMs, intervalMs));
    }
  }
}
