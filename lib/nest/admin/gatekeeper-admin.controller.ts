import { Body, Controller, Delete, Get, HttpCode, NotFoundException, Param, Patch, Post, Put, Query, UseGuards, UseFilters, type CanActivate, type Type } from '@nestjs/common';
import { z } from 'zod';
import { AdminExceptionFilter } from './admin-exception.filter';
import type { GroupMigrationRequest, UndoMigrationRequest } from '../../permits/group-migration.rules';
import { onlyKeys, trueOrFalseInput, WHOLE_NUMBER_TEXT } from '../../core/input-fields';
import { parseInput, type InputErrorFactory } from '../../core/input-schema';
import { validateSemaphoreName } from '../../permits/definition.validator';
import type { SemaphoreDefinitionInput } from '../../permits/semaphore-definition';
import { semaphoreKind, type KindGuardOptions } from '../../permits/semaphore-kind';
import { SemaphoreAdminService } from '../permits/semaphore-admin.service';
import { RuntimeSchedules } from '../schedules/runtime-schedules';
import { invalidDefinition } from '../../core/errors/input.errors';
import { unknownSemaphore } from '../../permits/errors/semaphore.errors';

/**
 * A bad field of a request, as the semaphores' error: on `semaphore` when one is concerned (`Semaphore "billing":
 * invalid permits: …`), else on the request (`Invalid body: …`, or with `scope`: `Invalid migration.dryrun: …`).
 */
const definitionError = (semaphore?: string, scope?: string): InputErrorFactory => (field, reason) => invalidDefinition(semaphore, field, reason, scope);

const JSON_OBJECT = z.looseObject({}, { error: 'must be a JSON object' });

/**
 * A body that is a JSON object, handed on as sent for the definition's validator to check key by key (zod's copy
 * would leave out a `__proto__` key, which that validator refuses).
 */
function body(value: unknown): Record<string, unknown> {
  parseInput(JSON_OBJECT, value, definitionError());
  return value as Record<string, unknown>;
}

/** An object of only these fields, their values the service's to check: a mistyped `dryrun` must not turn a dry run into a real one. */
function onlyFields(fields: readonly string[]) {
  return onlyKeys(fields, `is not a field of this request (expected ${fields.join(', ')})`);
}

/**
 * `?force=true`: the operator means to change an election's or allocation's permits (see `KindGuardOptions`). The
 * path's name is checked first: every later error names the semaphore.
 */
function forced(name: string, force: unknown): KindGuardOptions {
  validateSemaphoreName(name);
  return parseInput(trueOrFalseInput.optional(), force, definitionError(name), { field: 'force' }) ? { force: true } : {};
}

/** No body for a resume: nothing, or an empty object or list (each has always meant "the permits before the pause"). */
const NO_BODY = z.union([z.undefined(), z.null(), z.strictObject({}), z.tuple([])]);

const notWholePermits = ({ input }: { input: unknown }) => `must be a whole number, 1 or more, got ${JSON.stringify(input)}`;
/** A resume's body: `{ permits? }`, other keys ignored. */
const RESUME_BODY = z.object({ permits: z.int({ error: notWholePermits }).min(1, { error: notWholePermits }).optional() });

const notWholeToken = ({ input }: { input: unknown }) => `must be a whole number, got "${String(input)}"`;
/** A permit's fencing token, as the path gives it: digits only. */
const FENCING_TOKEN = z.string({ error: notWholeToken }).regex(WHOLE_NUMBER_TEXT, { error: notWholeToken }).transform(Number);

/** A listed item with its kind (`job`, `election`, `allocation`), so clients tell jobs from the others' semaphores. */
const withKind = <T extends { name: string }>(item: T): T & { kind: string } => ({ ...item, kind: semaphoreKind(item.name) });

/**
 * The runtime schedules whose semaphore each name is, by the schedules' own definitions (`schedule:<id>` unless one
 * names another). Such a semaphore is the schedule's: it writes its permits and patterns back whenever it changes,
 * so clients edit, pause and resume the schedule instead (the console lists it under Schedules only).
 */
function schedulesBySemaphore(schedules: RuntimeSchedules): Map<string, string[]> {
  const kept = new Map<string, string[]>();
  for (const { id, definition } of schedules.records()) kept.set(definition.semaphore, [...(kept.get(definition.semaphore) ?? []), id]);
  return kept;
}

const MIGRATION_REQUEST = onlyFields(['fromGroup', 'toGroup', 'names', 'namePattern', 'includeWildcards', 'force', 'dryRun']);
const UNDO_REQUEST = onlyFields(['names', 'namePattern', 'fromGroup', 'toGroup', 'dryRun']);

/** Builds the admin controller for a route prefix and guard (Nest takes both from decorators, so per module). */
export function createGatekeeperAdminController(path: string, guard: Type<CanActivate>): Type {
  @Controller(path)
  @UseGuards(guard)
  @UseFilters(AdminExceptionFilter)
  class GatekeeperAdminController {
    constructor(
      private readonly semaphores: SemaphoreAdminService,
      private readonly runtimeSchedules: RuntimeSchedules,
    ) {}

    /** Every definition with its kind, and `schedules` (the runtime schedules' ids) on a runtime schedule's semaphore. */
    @Get('definitions')
    list() {
      const kept = schedulesBySemaphore(this.runtimeSchedules);
      return this.semaphores.listDefinitions().map((d) => ({ ...withKind(d), ...(kept.has(d.name) && { schedules: kept.get(d.name) }) }));
    }

    @Get('definitions/:name')
    async get(@Param('name') name: string) {
      const kept = schedulesBySemaphore(this.runtimeSchedules).get(name);
      return { ...withKind(await this.semaphores.readDefinition(name)), ...(kept && { schedules: kept }) };
    }

    @Put('definitions/:name')
    put(@Param('name') name: string, @Body() input: unknown, @Query('force') force?: unknown) {
      const options = forced(name, force);
      const fields = body(input);
      if (fields.name !== undefined && fields.name !== name) {
        throw invalidDefinition(name, 'name', `body says "${String(fields.name)}" but the path says "${name}"`);
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
      if (!(await this.semaphores.removeDefinition(name))) throw unknownSemaphore(name);
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
      const { permits } = NO_BODY.safeParse(input).success ? {} : parseInput(RESUME_BODY, body(input), definitionError(name));
      return this.semaphores.resume(name, permits, options);
    }

    /** Body: `GroupMigrationRequest`. Answers the whole report: changes (before/after), skipped, target, warnings. */
    @Post('migrate')
    @HttpCode(200)
    migrate(@Body() input: unknown) {
      return this.semaphores.migrateGroups(parseInput(MIGRATION_REQUEST, body(input ?? {}), definitionError(undefined, 'migration')) as unknown as GroupMigrationRequest);
    }

    /** Body (optional): `UndoMigrationRequest`. Puts back the patterns the last migrations replaced. */
    @Post('migrate/undo')
    @HttpCode(200)
    undoMigration(@Body() input: unknown) {
      return this.semaphores.undoMigration(parseInput(UNDO_REQUEST, body(input ?? {}), definitionError(undefined, 'migration')) as UndoMigrationRequest);
    }

    @Get('permits')
    async permits() {
      return (await this.semaphores.permits()).map(withKind);
    }

    @Delete('permits/:name/:token')
    @HttpCode(204)
    async forceRelease(@Param('name') name: string, @Param('token') token: string) {
      const fencingToken = parseInput(FENCING_TOKEN, token, definitionError(validateSemaphoreName(name)), { field: 'fencingToken' });
      if (!(await this.semaphores.forceRelease(name, fencingToken))) {
        throw new NotFoundException(`Semaphore "${name}" has no live permit with fencing token ${token}`);
      }
    }
  }
  return GatekeeperAdminController;
}
