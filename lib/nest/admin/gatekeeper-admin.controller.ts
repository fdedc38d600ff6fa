import { Body, Controller, Delete, Get, HttpCode, NotFoundException, Param, Patch, Post, Put, Query, UseGuards, UseFilters, type CanActivate, type Type } from '@nestjs/common';
import { AdminExceptionFilter } from './admin-exception.filter';
import type { GroupMigrationRequest, UndoMigrationRequest } from '../../permits/group-migration.rules';
import { InvalidDefinitionError } from '../../core/errors/invalid-definition.error';
import { UnknownSemaphoreError } from '../../permits/errors/unknown-semaphore.error';
import type { SemaphoreDefinitionInput } from '../../permits/semaphore-definition';
import { semaphoreKind, type KindGuardOptions } from '../../permits/semaphore-kind';
import { SemaphoreAdminService } from '../permits/semaphore-admin.service';

function body(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidDefinitionError(undefined, 'body', 'must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** A body with only these fields: a mistyped `dryrun` must not turn a dry run into a real one. `scope` names the request in the message. */
function fieldsOf(value: unknown, allowed: readonly string[], scope: string): Record<string, unknown> {
  const fields = value === undefined || value === null ? {} : body(value);
  const unknown = Object.keys(fields).find((key) => !allowed.includes(key));
  if (unknown !== undefined) throw new InvalidDefinitionError(undefined, unknown, `is not a field of this request (expected ${allowed.join(', ')})`, scope);
  return fields;
}

/** `?force=true`: the operator means to change an election's or allocation's permits (see `KindGuardOptions`). */
function forced(name: string, force: unknown): KindGuardOptions {
  if (force === undefined || force === 'false') return {};
  if (force === 'true') return { force: true };
  throw new InvalidDefinitionError(name, 'force', `must be true or false, got ${JSON.stringify(force)}`);
}

/** A listed item with its kind (`job`, `election`, `allocation`), so clients tell jobs from the others' semaphores. */
const withKind = <T extends { name: string }>(item: T): T & { kind: string } => ({ ...item, kind: semaphoreKind(item.name) });

const MIGRATE_FIELDS = ['fromGroup', 'toGroup', 'names', 'namePattern', 'includeWildcards', 'force', 'dryRun'] as const;
const UNDO_FIELDS = ['names', 'namePattern', 'fromGroup', 'toGroup', 'dryRun'] as const;

/** Builds the admin controller for a route prefix and guard (Nest takes both from decorators, so per module). */
export function createGatekeeperAdminController(path: string, guard: Type<CanActivate>): Type {
  @Controller(path)
  @UseGuards(guard)
  @UseFilters(AdminExceptionFilter)
  class GatekeeperAdminController {
    constructor(private readonly semaphores: SemaphoreAdminService) {}

    @Get('definitions')
    list() {
      return this.semaphores.listDefinitions().map(withKind);
    }

    @Get('definitions/:name')
    async get(@Param('name') name: string) {
      return withKind(await this.semaphores.readDefinition(name));
    }

    @Put('definitions/:name')
    put(@Param('name') name: string, @Body() input: unknown, @Query('force') force?: unknown) {
      const options = forced(name, force);
      const fields = body(input);
      if (fields.name !== undefined && fields.name !== name) {
        throw new InvalidDefinitionError(name, 'name', `body says "${String(fields.name)}" but the path says "${name}"`);
      }
      return this.semaphores.putDefinition({ ...fields, name } as SemaphoreDefinitionInput, options);
    }

    @Patch('definitions/:name')
    update(@Param('name') name: string, @Body() patch: unknown, @Query('force') force?: unknown) {
      return this.semaphores.updateDefinition(name, body(patch), forced(name, force));
    }

    @Delete('definitions/:name')
    @HttpCode(204)
    async remove(@Param('name') name: string) {
      if (!(await this.semaphores.removeDefinition(name))) throw new UnknownSemaphoreError(name);
    }

    @Post('definitions/:name/pause')
    @HttpCode(200)
    pause(@Param('name') name: string, @Query('force') force?: unknown) {
      return this.semaphores.pause(name, forced(name, force));
    }

    @Post('definitions/:name/resume')
    @HttpCode(200)
    resume(@Param('name') name: string, @Body() input: unknown, @Query('force') force?: unknown) {
      const options = forced(name, force);
      const { permits } = input === undefined || input === null || (typeof input === 'object' && !Object.keys(input).length) ? { permits: undefined } : body(input);
      if (permits !== undefined && (typeof permits !== 'number' || !Number.isSafeInteger(permits) || permits < 1)) {
        throw new InvalidDefinitionError(name, 'permits', `must be a whole number, 1 or more, got ${JSON.stringify(permits)}`);
      }
      return this.semaphores.resume(name, permits, options);
    }

    /** Body: `GroupMigrationRequest`. Answers the whole report: changes (before/after), skipped, target, warnings. */
    @Post('migrate')
    @HttpCode(200)
    migrate(@Body() input: unknown) {
      return this.semaphores.migrateGroups(fieldsOf(input, MIGRATE_FIELDS, 'migration') as unknown as GroupMigrationRequest);
    }

    /** Body (optional): `UndoMigrationRequest`. Puts back the patterns the last migrations replaced. */
    @Post('migrate/undo')
    @HttpCode(200)
    undoMigration(@Body() input: unknown) {
      return this.semaphores.undoMigration(fieldsOf(input, UNDO_FIELDS, 'migration') as UndoMigrationRequest);
    }

    @Get('permits')
    async permits() {
      return (await this.semaphores.permits()).map(withKind);
    }

    @Delete('permits/:name/:token')
    @HttpCode(204)
    async forceRelease(@Param('name') name: string, @Param('token') token: string) {
      if (!/^\d+$/.test(token)) throw new InvalidDefinitionError(name, 'fencingToken', `must be a whole number, got "${token}"`);
      if (!(await this.semaphores.forceRelease(name, Number(token)))) {
        throw new NotFoundException(`Semaphore "${name}" has no live permit with fencing token ${token}`);
      }
    }
  }
  return GatekeeperAdminController;
}
