import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { HttpFenceStore, type FenceVerdict } from '../../fencing/http/http-fence.store';
import { GATEKEEPER_BACKENDS } from '../gatekeeper.constants';
import type { ModuleBackends } from '../gatekeeper-stores.factory';

/**
 * The fences of this service's `@Fenced` routes, on the module's backend (the permits'): opened at the first fenced
 * call, closed with the module.
 */
@Injectable()
export class HttpFences implements OnModuleDestroy {
  private readonly store: HttpFenceStore;

  constructor(@Inject(GATEKEEPER_BACKENDS) backends: ModuleBackends) {
    this.store = new HttpFenceStore(backends.of.permits);
  }

  /** Raises `resource`'s fence to `token`, or says the newer token that refuses it. */
  accept(resource: string, token: number): Promise<FenceVerdict> {
    return this.store.accept(resource, token);
  }

  async onModuleDestroy(): Promise<void> {
    await this.store.close();
  }
}
