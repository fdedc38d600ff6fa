import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { GatekeeperService, type GatekeeperEvent } from 'nestjs-gatekeeper';
import { filter, type Subscription } from 'rxjs';

type EventNamed<N extends GatekeeperEvent['name']> = Extract<GatekeeperEvent, { name: N }>;

/** Alerts on what operators must hear of: through @nestjs/event-emitter, and the same events as an rxjs stream. */
@Injectable()
export class GatekeeperAlerts implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(GatekeeperAlerts.name);
  private subscription?: Subscription;

  constructor(private readonly gatekeeper: GatekeeperService) {}

  @OnEvent('gatekeeper.permit.lost')
  permitLost(event: EventNamed<'gatekeeper.permit.lost'>): void {
    this.logger.warn(`${event.job} lost "${event.semaphore}" on ${event.node}: ${event.reason}`);
  }

  @OnEvent('gatekeeper.task.failed')
  taskFailed(event: EventNamed<'gatekeeper.task.failed'>): void {
    this.logger.error(`task ${event.task} failed for good: ${event.error}`);
  }

  /** Without @nestjs/event-emitter: the stream has every event. */
  onModuleInit(): void {
    this.subscription = this.gatekeeper.events
      .pipe(filter((event): event is EventNamed<'gatekeeper.leader.elected'> => event.name === 'gatekeeper.leader.elected'))
      .subscribe((event) => this.logger.log(`${event.node} leads "${event.election}" (epoch ${event.epoch})`));
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }
}
