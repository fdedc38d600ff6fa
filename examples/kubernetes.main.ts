import { NestFactory } from '@nestjs/core';
import { AppModule } from './kubernetes.module';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  // SIGTERM from the kubelet closes the app: ticks stop, running jobs get shutdownTimeout to finish, and held permits
  // are released, so another replica takes a job over at its next tick instead of after the permit's expiry. Only the
  // signals a deployment sends: with none named, Nest also traps SIGSEGV and SIGBUS, and a crashed process spins.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(Number(process.env.PORT ?? 3000));
}

bootstrap().catch((error: unknown) => {
  // A start that failed says why in one line (a store out of reach, a mistaken option); a bug, with its stack.
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
