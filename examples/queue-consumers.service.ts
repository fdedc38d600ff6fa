import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AllocationService, type ResourceLease } from 'nestjs-gatekeeper';

/** Consumes 12 queues spread over the live instances: each queue on exactly one instance at any time. */
@Injectable()
export class QueueConsumers implements OnModuleInit {
  private readonly logger = new Logger(QueueConsumers.name);
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly allocations: AllocationService) {}

  onModuleInit(): void {
    this.allocations.participate('queues', {
      // The whole set, the same on every node; re-read every 30 s, or now after resourcesChanged('queues').
      resources: async () => Array.from({ length: 12 }, (_, i) => `queue-${i}`),
      onAssigned: (queues, lease) => {
        for (const queue of queues) this.start(queue, lease);
      },
      // Stop before returning: the queue moves to its new owner only after this returned.
      onRevoked: async (queues) => {
        for (const queue of queues) {
          this.running.get(queue)?.abort();
          this.running.delete(queue);
        }
      },
    });
  }

  private start(queue: string, lease: ResourceLease): void {
    const stop = new AbortController();
    this.running.set(queue, stop);
    const epoch = lease.epochOf(queue)!; // grows with every new owner of this queue: fence your writes with it
    this.logger.log(`consuming ${queue} (epoch ${epoch})`);
    const timer = setInterval(() => {
      if (!lease.owns(queue)) return clearInterval(timer); // the whole part lost (lease lapsed, paused, excluded)
      // poll the queue and write results with `epoch`, so a store can reject a stale owner's writes
    }, 1_000);
    stop.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }
}
