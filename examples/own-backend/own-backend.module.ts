import { Module } from '@nestjs/common';
import { GatekeeperModule, PostgresBackend } from 'nestjs-gatekeeper';
import { TracedBackend } from './traced-backend';

// The instance goes where a backend's name would: every capability of the module keeps its state in it.
@Module({
  imports: [
    GatekeeperModule.forRoot({
      backend: new TracedBackend(new PostgresBackend({ connectionString: process.env.DATABASE_URL })),
      definitions: [{ name: 'billing', duration: '1m' }],
    }),
  ],
})
export class AppModule {}
