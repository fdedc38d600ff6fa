import { Body, Controller, Injectable, Post } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton, Fenced, FencingToken, GatekeeperService } from 'nestjs-gatekeeper';
import { fencedFetch } from 'nestjs-gatekeeper/fencing';

/** The caller: a cluster-singleton job that posts to another service, its permit's token on the call. */
@Injectable()
export class SettlementJob {
  constructor(private readonly gatekeeper: GatekeeperService) {}

  @Cron('0 */5 * * * *')
  @ClusterSingleton('settlement', '1m')
  async settle(): Promise<void> {
    const call = fencedFetch(this.gatekeeper.currentLease()!);
    const answer = await call('http://ledger:3000/entries', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ batch: new Date().toISOString() }),
    });
    if (answer.status === 409) throw new Error('a newer holder already posted: this run lost its permit');
  }
}

/** The receiving service: a stale holder's call is refused with 409 before the handler runs. */
@Controller('entries')
export class EntriesController {
  @Post()
  @Fenced('ledger')
  add(@Body() entry: { batch: string }, @FencingToken() token: number): { accepted: number } {
    // Pass `token` on to fence() in this service's own transaction where its write must be in token order too.
    return { accepted: token };
  }
}
