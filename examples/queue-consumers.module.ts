import { Module } from '@nestjs/common';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { QueueConsumers } from './queue-consumers.service';

@Module({
  imports: [
    GatekeeperModule.forRoot({
      identity: { group: process.env.SITE!, acquirer: process.env.POD_NAME! },
      // Who takes part, and how fast a crashed node's queues move (10 s + 2 × maxClockSkew, plus one claim).
      allocations: [{ name: 'queues', lease: '10s', groupPattern: 'production', rebalanceDelay: '3s' }],
    }),
  ],
  providers: [QueueConsumers],
})
export class QueueConsumersModule {}
