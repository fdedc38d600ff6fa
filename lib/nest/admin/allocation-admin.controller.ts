import { Controller, Get, HttpCode, Inject, Param, Post, UseGuards, UseFilters, type CanActivate, type Type } from '@nestjs/common';
import { AdminExceptionFilter } from './admin-exception.filter';
import { readAllocation, readAllocations, requestRebalance } from '../../allocation/allocation-admin';
import type { AllocationStatus } from '../../allocation/allocation-status';
import type { PermitStore } from '../../permits/permit-store';
import { GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';

/**
 * Builds the admin controller of allocations, under the same prefix and guard as the other admin routes. Read
 * from the cluster (one round trip), so the answers are exact and work from any node.
 */
export function createAllocationAdminController(path: string, guard: Type<CanActivate>): Type {
  @Controller(path)
  @UseGuards(guard)
  @UseFilters(AdminExceptionFilter)
  class AllocationAdminController {
    constructor(
      @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
      @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    ) {}

    /** Every allocation: who owns what, how many resources nobody owns, the skew, the last rebalance. */
    @Get('allocations')
    list(): Promise<AllocationStatus[]> {
      return readAllocations(this.store, this.options.permitClock, this.options.clockSkewMs, this.options.storeTimeoutMs);
    }

    /** One allocation; 404 naming it if the cluster has no such allocation. */
    @Get('allocations/:name')
    one(@Param('name') name: string): Promise<AllocationStatus> {
      return readAllocation(this.store, name, this.options.permitClock, this.options.clockSkewMs, this.options.storeTimeoutMs);
    }

    /** Asks the allocation's coordinator for a rebalance (it re-reads the resource set). */
    @Post('allocations/:name/rebalance')
    @HttpCode(202)
    async rebalance(@Param('name') name: string): Promise<{ requested: true; allocation: string }> {
      await readAllocation(this.store, name, this.options.permitClock);
      await requestRebalance(this.store, name, this.options.storeTimeoutMs);
      return { requested: true as const, allocation: name };
    }
  }
  return AllocationAdminController;
}
