import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  // On SIGTERM/SIGINT: finish or stop running jobs, then release this node's permits at once (not at expiry). Only
  // these two: with none named, Nest also traps SIGSEGV and SIGBUS, and a process that crashed in native code then
  // spins instead of dying (its transactions held open).
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(process.env.PORT ?? 3000);
}
bootstrap().catch((error: unknown) => {
  // A start that failed says why in one line (a store out of reach, a mistaken option); a bug, with its stack.
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
