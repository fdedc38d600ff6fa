import { Injectable, Logger } from '@nestjs/common';
import { GATEKEEPER_LOGGER_CONTEXT } from './gatekeeper.constants';
import { messages } from './gatekeeper.messages';
import { GatekeeperService } from './gatekeeper.service';
import type { ResolvedClusterSingletonOptions } from './cluster-singleton.options';

/** Runs a `@ClusterSingleton` method's tick: acquire or refresh, run under the permit, release in release mode. */
@Injectable()
export class ClusterSingletonRunner {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly active = new Set<string>();
  private readonly holding = new Set<string>();

  constructor(private readonly gatekeeper: GatekeeperService) {}

  /** One tick of the method `where`. Returns the method's result, or `undefined` when skipped. */
  async run(options: ResolvedClusterSingletonOptions, where: string, invoke: () => unknown): Promise<unknown> {
    if (this.active.has(where)) {
      // A tick that overlaps the previous run must not start a second copy on this node.
      this.logger.debug(messages.overlap(where));
      return undefined;
    }
    // Local answers: a non-holder denies and a holder keeps its permit without a round trip until a refresh is due.
    const result = await this.gatekeeper.tryAcquire(options.semaphore, { local: true });
    if (!result.granted) {
      if (this.holding.delete(where)) this.logger.log(messages.lost(where, result));
      else this.logger.debug(messages.skipped(where, result));
      return undefined;
    }
    const { permit } = result;
    if (options.mode === 'hold' && !this.holding.has(where)) {
      this.holding.add(where);
      this.logger.log(messages.granted(where, permit));
    }
    this.active.add(where);
    try {
      return await this.gatekeeper.runUnderPermit(permit, invoke, options.keepAlive);
    } finally {
      this.active.delete(where);
      if (options.mode === 'release') {
        const current = this.gatekeeper.heldPermits().find((p) => p.semaphore === permit.semaphore) ?? permit;
        await this.gatekeeper.releaseQuietly(current, permit.refreshedAt + options.lockAtLeastForMs);
      }
    }
  }
}
