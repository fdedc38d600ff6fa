import { Controller, Get, Header } from '@nestjs/common';
import { register } from 'prom-client';

/** Serves prom-client's global registry, where the gatekeeper registers its metrics (`metrics: true`). */
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('Content-Type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}
