import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { sampleConfig } from './sample.config';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn', 'log'] });
  // Without this, Ctrl-C would not release this instance's permits; they would only expire.
  app.enableShutdownHooks();
  await app.listen(sampleConfig.port, '127.0.0.1');
  console.log(`${sampleConfig.acquirer} (${sampleConfig.group}) listening on http://127.0.0.1:${sampleConfig.port}; console: http://127.0.0.1:${sampleConfig.port}/gatekeeper/console`);
}

void bootstrap();
