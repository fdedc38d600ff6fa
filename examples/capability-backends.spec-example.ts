import { Test, type TestingModule } from '@nestjs/testing';
import { GatekeeperModule, type StoreBackend } from 'nestjs-gatekeeper';

/**
 * One node whose permits stay on the module's `backend` while its run history and runtime schedules go to a
 * backend of their own: the one a durable store gives you in production, here any `StoreBackend` you pass in.
 */
export async function createNode(durable: StoreBackend, acquirer: string): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      GatekeeperModule.forRootAsync({
        useFactory: () => ({
          identity: { acquirer },
          backend: 'memory', // permits, presence and tasks: this process only
          backends: { history: durable, schedules: durable }, // shared by every node on `durable`
          definitions: [{ name: 'billing', duration: '1m' }],
        }),
      }),
    ],
  }).compile();
  return moduleRef.init();
}
