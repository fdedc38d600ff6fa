import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AllocationService, GatekeeperService } from 'nestjs-gatekeeper';

/** The sample's 12 queues, spread over the live instances by the allocation 'queues'. */
export const SAMPLE_QUEUES = Array.from({ length: 12 }, (_, i) => `queue-${String(i + 1).padStart(2, '0')}`);

/** Consumers of the queues this instance is given: each queue on exactly one instance at a time. */
@Injectable()
export class QueueConsumers implements OnModuleInit {
  private readonly logger = new Logger('queues');

  constructor(
    private readonly allocations: AllocationService,
    private readonly gatekeeper: GatekeeperService,
  ) {}

  onModuleInit(): void {
    const me = this.gatekeeper.identity.acquirer;
    this.allocations.participate('queues', {
      resources: () => SAMPLE_QUEUES,
      onAssigned: (queues, lease) => {
        const epochs = queues.map((q) => `${q}@${lease.epochOf(q)}`).join(', ');
        this.logger.log(`${me} consumes ${queues.length} more queue(s): ${epochs}; now ${this.allocations.owned('queues').join(', ')}`);
      },
      onRevoked: async (queues, reason) => {
        this.logger.log(`${me} stops ${queues.join(', ')} (${reason})`);
      },
    });
  }
}
