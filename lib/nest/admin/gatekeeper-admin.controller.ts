import {
  Body, Controller, Delete, Get, HttpCode, NotFoundException, Param, Patch, Post, Put, UseGuards, type CanActivate, type Type,
} from '@nestjs/common';
import type { GroupMigrationRequest, UndoMigrationRequest } from '../../permits/semaphore-admin';
import { InvalidDefinitionError } from '../../core/errors/invalid-definition.error';
import { UnknownSemaphoreError } from '../../permits/errors/unknown-semaphore.error';
import type { SemaphoreDefinitionInput } from '../../permits/semaphore-definition';
import { GatekeeperService } from '../gatekeeper.service';
import { answer } from './admin-answer';

function body(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidDefinitionError('<request>', 'body', 'must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** A body with only these fields: a mistyped `dryrun` must not turn a dry run into a real one. */
function fieldsOf(value: unknown, allowed: readonly string[], owner: string): Record<string, unknown> {
  const fields = value === undefined || value === null ? {} : body(value);
  const unknown = Object.keys(fields).find((key) => !allowed.includes(key));
  if (unknown !== undefined) throw new InvalidDefinitionError(owner, unknown, `is not a field of this request (expected ${allowed.join(', ')})`);
  return fields;
}

const MIGRATE_FIELDS = ['fromGroup', 'toGroup', 'names', 'namePattern', 'includeWildcards', 'force', 'dryRun'] as const;
const UNDO_FIELDS = ['names', 'namePattern', 'fromGroup', 'toGroup', 'dryRun'] as const;

/** Builds the admin controller for a route prefix and guard (Nest takes both from decorators, so per module). */
export function createGatekeeperAdminController(path: string, guard: Type<CanActivate>): Type {
  @Controller(path)
  @UseGuards(guard)
  class GatekeeperAdminController {
    constructor(private readonly gatekeeper: GatekeeperService) {}

    @Get('definitions')
    list() {
      return this.gatekeeper.listDefinitions();
    }

    @Get('definitions/:name')
    get(@Param('name') name: string) {
      return answer(() => this.gatekeeper.readDefinition(name));
    }

    @Put('definitions/:name')
    put(@Param('name') name: string, @Body() input: unknown) {
      return answer(async () => {
        const fields = body(input);
        if (fields.name !== undefined && fields.name !== name) {
          throw new InvalidDefinitionError(name, 'name', `body says "${String(fields.name)}" but the path says "${name}"`);
        }
        return this.gatekeeper.putDefinition({ ...fields, name } as SemaphoreDefinitionInput);
      });
    }

    @Patch('definitions/:name')
    update(@Param('name') name: string, @Body() patch: unknown) {
      return answer(() => this.gatekeeper.updateDefinition(name, body(patch)));
    }

    @Delete('definitions/:name')
    @HttpCode(204)
    remove(@Param('name') name: string) {
      return answer(async () => {
        if (!(await this.gatekeeper.removeDefinition(name))) throw new UnknownSemaphoreError(name);
      });
    }

    @Post('definitions/:name/pause')
    @HttpCode(200)
    pause(@Param('name') name: string) {
      return answer(() => this.gatekeeper.pause(name));
    }

    @Post('definitions/:name/resume')
    @HttpCode(200)
    resume(@Param('name') name: string, @Body() input: unknown) {
      return answer(() => {
        const { permits } = input === undefined || input === null || (typeof input === 'object' && !Object.keys(input).length) ? { permits: undefined } : body(input);
        if (permits !== undefined && (typeof permits !== 'number' || !Number.isSafeInteger(permits) || permits < 1)) {
          throw new InvalidDefinitionError(name, 'permits', `must be a whole number, 1 or more, got ${JSON.stringify(permits)}`);
        }
        return this.gatekeeper.resume(name, permits);
      });
    }

    /** Body: `GroupMigrationRequest`. Answers the whole report: changes (before/after), skipped, target, warnings. */
    @Post('migrate')
    @HttpCode(200)
    migrate(@Body() input: unknown) {
      return answer(async () => this.gatekeeper.migrateGroups(fieldsOf(input, MIGRATE_FIELDS, '<migration>') as unknown as GroupMigrationRequest));
    }

    /** Body (optional): `UndoMigrationRequest`. Puts back the patterns the last migrations replaced. */
    @Post('migrate/undo')
    @HttpCode(200)
    undoMigration(@Body() input: unknown) {
      return answer(async () => this.gatekeeper.undoMigration(fieldsOf(input, UNDO_FIELDS, '<migration>') as UndoMigrationRequest));
    }

    @Get('permits')
    permits() {
      return answer(() => this.gatekeeper.permits());
    }

    @Delete('permits/:name/:token')
    @HttpCode(204)
    forceRelease(@Param('name') name: string, @Param('token') token: string) {
      return answer(async () => {
        if (!/^\d+$/.test(token)) throw new InvalidDefinitionError(name, 'fencingToken', `must be a whole number, got "${token}"`);
        if (!(await this.gatekeeper.forceRelease(name, Number(token)))) {
          throw new NotFoundException(`Semaphore "${name}" has no live permit with fencing token ${token}`);
        }
      });
    }
  }
  return GatekeeperAdminController;
}
