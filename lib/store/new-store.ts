import { GatekeeperError } from '../core/errors/gatekeeper.error';
import type { NewStoreReport } from './new-store-report';
import type { StoreBackend } from './store-backend';

/**
 * Declares `backend`'s store new ({@link StoreBackend.declareNew}), or says the backend has no state to declare: what
 * `nestjs-gatekeeper store init` runs.
 */
export async function declareNewStore(backend: StoreBackend): Promise<NewStoreReport> {
  if (!backend.declareNew) throw new GatekeeperError(`the ${backend.kind} backend has no state to declare new`);
  return backend.declareNew();
}
