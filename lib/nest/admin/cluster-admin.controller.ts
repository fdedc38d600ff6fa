import { Controller, Get, HttpCode, Inject, Param, Post, UseGuards, UseFilters, type CanActivate, type Type } from '@nestjs/common';
import { AdminExceptionFilter } from './admin-exception.filter';
import { readElection, resignLeader, type ResignResult } from '../../elections/election-admin';
import { clusterOverview, type ClusterOverview, type ElectionStatus } from '../../elections/election-status';
import { ClusterService } from '../elections/cluster.service';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { SemaphoreAdminService } from '../permits/semaphore-admin.service';

/**
 * Builds the admin controller of the cluster and its elections, under the same prefix and guard as the
 * definitions and permits routes. Participants come from this node's presence view (the answer says how old it
 * may be); elections are read from the cluster (one round trip), so they are exact, and resign works from any node.
 */
export function createClusterAdminController(path: string, guard: Type<CanActivate>): Type {
  @Controller(path)
  @UseGuards(guard)
  @UseFilters(AdminExceptionFilter)
  class ClusterAdminController {
    constructor(
      private readonly cluster: ClusterService,
      private readonly semaphores: SemaphoreAdminService,
      @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    ) {}

    /** The live app instances (with their age) and every election (leader, epoch, lease left, definition). */
    @Get('cluster')
    async status(): Promise<ClusterOverview> {
      const semaphores = await this.semaphores.permits();
      const participants = this.cluster.participants();
      return clusterOverview({ participants, viewAgeMs: this.cluster.viewAgeMs(), semaphores }, this.options.permitClock.now());
    }

    /** One election: its leader, epoch, lease left and definition; 404 naming it if the cluster has no such election. */
    @Get('elections/:name')
    election(@Param('name') name: string): Promise<ElectionStatus> {
      return readElection(this.semaphores, name, this.options.permitClock);
    }

    /** Makes the election's current leader step down (its lease is revoked); another node takes over. */
    @Post('elections/:name/resign')
    @HttpCode(200)
    resign(@Param('name') name: string): Promise<ResignResult> {
      return resignLeader(this.semaphores, name, this.options.permitClock);
    }
  }
  return ClusterAdminController;
}
