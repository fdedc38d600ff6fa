import { Inject, Injectable } from '@nestjs/common';
import type { PermitStore } from '../../permits/permit-store';
import type { GroupMigrationReport } from '../../permits/group-migrations';
import type { GroupMigrationRequest, UndoMigrationRequest } from '../../permits/group-migration.rules';
import type { SemaphoreDefinition, SemaphoreDefinitionInput } from '../../permits/semaphore-definition';
import type { SemaphoreStatus } from '../../permits/semaphore-status';
import type { KindGuardOptions } from '../../permits/semaphore-kind';
import { GATEKEEPER_STORE } from '../gatekeeper.constants';
import { PermitsStartup } from './permits.startup';
import { PermitsRuntime } from './permits.runtime';

/**
 * The operator's tools for semaphores: definitions (validated, applied cluster-wide by compare-and-set, retried on
 * conflict), pause and resume, group migrations and their undo, the state of every permit, force-release and reset.
 * Permits taken by your own code (acquire, release, `withPermit`, the running job's lease) are
 * {@link GatekeeperService}'s.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class FailOver {
 *   constructor(private readonly semaphores: SemaphoreAdminService) {}
 *
 *   async toDrSite(): Promise<void> {
 *     await this.semaphores.migrate('production', 'dr-site'); // holders give their permits up at their next refresh
 *   }
 * }
 * ```
 */
@Injectable()
export class SemaphoreAdminService {
  /** @internal Nest injects the service; applications never construct it. */
  constructor(
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly startup: PermitsStartup,
    private readonly runtime: PermitsRuntime,
  ) {}

  /**
   * Every definition this node knows, sorted by name (its view of the cluster, kept current by events).
   *
   * @example
   * ```ts
   * const names = semaphores.listDefinitions().map((d) => d.name);
   * ```
   */
  listDefinitions(): SemaphoreDefinition[] {
    return this.runtime.admin.list();
  }

  /**
   * The definition with this name as this node knows it, if any (no round trip).
   *
   * @example
   * ```ts
   * const paused = semaphores.getDefinition('billing')?.permits === 0;
   * ```
   */
  getDefinition(name: string): SemaphoreDefinition | undefined {
    return this.store.peek(name)?.entry?.definition ?? undefined;
  }

  /**
   * The definition as stored in the cluster now. Throws {@link NotFoundError} if there is none.
   *
   * @example
   * ```ts
   * const { permits, durationMs } = await semaphores.readDefinition('billing');
   * ```
   */
  readDefinition(name: string): Promise<SemaphoreDefinition> {
    return this.runtime.admin.get(name);
  }

  /**
   * Creates or replaces a definition, cluster-wide. Validated first: a bad one throws {@link InvalidInputError}
   * and nothing is stored. Creating an election's or allocation's semaphore, or changing its permits, needs
   * `{ force: true }`.
   *
   * @example
   * ```ts
   * await semaphores.putDefinition({ name: 'reports', permits: 2, duration: '5m', groupPattern: 'production' });
   * ```
   */
  putDefinition(input: SemaphoreDefinitionInput, options?: KindGuardOptions): Promise<SemaphoreDefinition> {
    return this.runtime.admin.put(input, options);
  }

  /**
   * Changes some fields of an existing definition by compare-and-set on what the cluster holds now. The permits of
   * an election's or allocation's semaphore only with `{ force: true }`.
   *
   * @example
   * ```ts
   * await semaphores.updateDefinition('billing', { groupPattern: 'dr-site' }); // the holder lets go at its next refresh
   * ```
   */
  updateDefinition(name: string, patch: Partial<Omit<SemaphoreDefinitionInput, 'name'>>, options?: KindGuardOptions): Promise<SemaphoreDefinition> {
    return this.runtime.admin.update(name, patch, options);
  }

  /**
   * Removes a definition; returns whether it existed. Live permits then lapse at their holders' next refresh.
   *
   * @example
   * ```ts
   * const existed = await semaphores.removeDefinition('old-job');
   * ```
   */
  removeDefinition(name: string): Promise<boolean> {
    return this.runtime.admin.remove(name);
  }

  /**
   * Pauses a semaphore everywhere (permits to 0); the holder stops at its next refresh. An election's or
   * allocation's semaphore (`election:leader`) only with `{ force: true }`: it is refused with
   * {@link InvalidInputError} otherwise, since a job's tools should not stop a leader or an allocation by accident.
   *
   * @example
   * ```ts
   * await semaphores.pause('billing'); // until resume('billing')
   * ```
   */
  pause(name: string, options?: KindGuardOptions): Promise<SemaphoreDefinition> {
    return this.runtime.admin.pause(name, options);
  }

  /**
   * Resumes a paused semaphore with the permits it had (or `permits`); an election's or allocation's with `{ force: true }`.
   *
   * @example
   * ```ts
   * await semaphores.resume('billing');    // the permits it had before the pause
   * await semaphores.resume('reports', 3); // or these
   * ```
   */
  resume(name: string, permits?: number, options?: KindGuardOptions): Promise<SemaphoreDefinition> {
    return this.runtime.admin.resume(name, permits, options);
  }

  /**
   * Moves the semaphores whose group pattern lists `fromGroup` (a plain list of group names, never a `.*`) to
   * `toGroup`; `dryRun` only reports. See {@link SemaphoreAdminService.migrateGroups} for selection, wildcards and
   * the full report.
   *
   * @example
   * ```ts
   * const planned = await semaphores.migrate('production', 'dr-site', { dryRun: true });
   * ```
   */
  migrate(fromGroup: string, toGroup: string, options: { dryRun?: boolean } = {}): Promise<GroupMigrationReport['changes']> {
    return this.runtime.admin.migrate(fromGroup, toGroup, options);
  }

  /**
   * A group migration with every choice: which semaphores (names, a name pattern), wildcard patterns too or not,
   * a dry run. Reports each change (pattern before and after), what it skipped and why, and a warning when no
   * live node is known in the target group. Each definition remembers what it replaced, for
   * {@link SemaphoreAdminService.undoMigration}.
   *
   * @example
   * ```ts
   * const { changes, skipped, warnings } = await semaphores.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', names: ['billing'] });
   * ```
   */
  migrateGroups(request: GroupMigrationRequest): Promise<GroupMigrationReport> {
    return this.runtime.admin.migrateGroups(request);
  }

  /**
   * Puts back the group patterns the last migration of each selected semaphore replaced, unless edited since.
   * Answers a {@link GroupMigrationReport}'s `dryRun`, `changes` (`to`: the pattern restored) and `skipped`.
   *
   * @example
   * ```ts
   * const { changes, skipped } = await semaphores.undoMigration({ names: ['billing'] });
   * ```
   */
  undoMigration(request?: UndoMigrationRequest): Promise<Pick<GroupMigrationReport, 'dryRun' | 'changes' | 'skipped'>> {
    return this.runtime.admin.undoMigration(request);
  }

  /**
   * Every semaphore with its definition, live permits (holder, group, expiry, fencing token) and last token.
   *
   * @example
   * ```ts
   * const billing = (await semaphores.permits()).find((s) => s.name === 'billing');
   * ```
   */
  permits(): Promise<SemaphoreStatus[]> {
    return this.runtime.admin.permits();
  }

  /**
   * Operator action: takes the permit with this fencing token away, whoever holds it; returns whether there was
   * one. Its holder is told first (its job's signal fires); nobody else gets it until the holder let go or it expired.
   *
   * @example
   * ```ts
   * const [stuck] = (await semaphores.permits()).find((s) => s.name === 'export')?.permits ?? [];
   * if (stuck) await semaphores.forceRelease('export', stuck.fencingToken);
   * ```
   */
  forceRelease(semaphore: string, fencingToken: number): Promise<boolean> {
    return this.runtime.admin.forceRelease(semaphore, fencingToken);
  }

  /**
   * Operator repair: takes every permit of `semaphore` away (as {@link SemaphoreAdminService.forceRelease} does) and
   * rebuilds an unreadable entry, waiting out every permit it could have held before granting again. Tokens keep growing.
   *
   * @example
   * ```ts
   * await semaphores.resetPermits('billing'); // after "Ignoring unreadable value under ..." in the log
   * ```
   */
  async resetPermits(semaphore: string): Promise<void> {
    await this.runtime.admin.resetPermits(semaphore, {
      graceDurationMs: this.startup.knownDurationMs(semaphore),
      definition: this.startup.knownDefinition(semaphore),
    });
    this.runtime.notices.forgetCorrupt(semaphore);
  }

  /**
   * Logs one line per semaphore now (holders, expiries, tokens, denials here since the last dump), as
   * `stateDumpInterval` does.
   *
   * @example
   * ```ts
   * await semaphores.dumpState();
   * ```
   */
  dumpState(): Promise<void> {
    return this.runtime.dumpState();
  }
}
