import { Controller, Get, Post } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatekeeperService } from 'nestjs-gatekeeper';

/** A permit taken by hand through the injected service. */
@Controller()
export class ReindexController {
  constructor(private readonly gatekeeper: GatekeeperService) {}

  /** Runs a 1 s "reindex" only if no other instance is running one. */
  @Post('reindex')
  async reindex() {
    const result = await this.gatekeeper.withPermit('reindex', async (lease) => {
      await sleep(1000);
      return { fencingToken: lease.permit.fencingToken };
    });
    return result.ran
      ? { ran: true, by: this.gatekeeper.identity.acquirer, fencingToken: result.value.fencingToken }
      : { ran: false, by: this.gatekeeper.identity.acquirer, reason: result.denied.reason, message: result.denied.message };
  }

  /** Who this instance is and which permits it holds. */
  @Get('status')
  status() {
    return { identity: this.gatekeeper.identity, held: this.gatekeeper.heldPermits() };
  }
}
