import type { ClientConfig } from 'hazelcast-client';
import { HazelcastBackend } from '../../lib';
import { declareNewStore } from '../../lib/permits/new-store';

/**
 * Declares a cluster the test has just started itself as brand new (no recovery wait before its first grants), as
 * `nestjs-gatekeeper store init` does.
 */
export async function declareFresh(config: ClientConfig): Promise<void> {
  const report = await declareNewStore(new HazelcastBackend({ clientConfig: config }));
  if (!report.declared) throw new Error(`${report.store} was not declared new`);
}
