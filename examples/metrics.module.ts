import { Controller, Get, Header, Module } from '@nestjs/common';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { register } from 'prom-client';

/** Serves prom-client's global registry, where the gatekeeper registers its metrics by default. */
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('Content-Type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}

@Module({
  imports: [GatekeeperModule.forRoot({ identity: { acquirer: 'billing-1' }, metrics: true })],
  controllers: [MetricsController],
})
export class AppModule {}
