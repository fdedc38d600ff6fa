import { Test } from '@nestjs/testing';
import { GatekeeperModule, GatekeeperService } from 'nestjs-gatekeeper';

// In your own unit tests: no cluster needed.
export async function createTestingGatekeeper(): Promise<GatekeeperService> {
  const moduleRef = await Test.createTestingModule({
    imports: [GatekeeperModule.forRoot({ backend: 'memory', definitions: [{ name: 'billing', duration: '1m' }] })],
  }).compile();
  await moduleRef.init();
  return moduleRef.get(GatekeeperService);
}
