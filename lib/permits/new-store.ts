import { GatekeeperError } from '../core/errors/gatekeeper.error';
import type { NewStoreReport } from '../store/new-store-report';
import type { StoreBackend } from '../store/store-backend';
import { SEMAPHORE_NEW_STORE_RULES } from './semaphore-new-store';

/**
 * Declares `backend`'s store new ({@link StoreBackend.declareNew}) with the rules of the records that wait out a
 * recovery (the semaphores'), or says the backend has no state to declare: what `nestjs-gatekeeper store init` runs.
 */
export async function declareNewStore(backend: StoreBackend): Promise<NewStoreReport> {
  if (!backend.declareNew) throw new GatekeeperError(`the ${backend.kind} backend has no state to declare new`);
  return backend.declareNew([SEMAPHORE_NEW_STORE_RULES]);
}
