import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { sampleConfig } from './sample.config';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn', 'log'] });
  // Without this, Ctrl-C would not release this instance's permits; they would only expire. Only SIGTERM and SIGINT:
  // with none named, Nest also traps SIGSEGV and SIGBUS, and a process that crashed in native code spins instead of dying.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(sampleConfig.port, '127.0.0.1');
  console.log(`${sampleConfig.acquirer} (${sampleConfig.group}) listening on http://127.0.0.1:${sampleConfig.port}; console: http://127.0.0.1:${sampleConfig.port}/gatekeeper/console`);
}

void bootstrap();
