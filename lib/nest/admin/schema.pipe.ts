import type { PipeTransform } from '@nestjs/common';
import type { z } from 'zod';
import { parseInput, type InputErrorFactory, type ParseInputOptions } from '../../core/input-schema';

/**
 * Checks a route's `@Body()` or `@Query()` with a zod schema before the handler runs, as {@link parseInput} does: a
 * bad field throws the caller's own error, which the admin routes' exception filter answers with a 400 naming it.
 * Only for input whose error needs nothing else from the request: a check whose error names the path's job or
 * semaphore stays in the handler, which has both.
 */
export class SchemaPipe<S extends z.ZodType> implements PipeTransform<unknown, z.output<S>> {
  constructor(
    /** What the input must be; its messages are the reasons the errors carry. */
    private readonly schema: S,
    /** The route's own error for a bad field (`InvalidInputError`, …). */
    private readonly toError: InputErrorFactory,
    /** How to name the input itself (default `'body'`). */
    private readonly options: ParseInputOptions = {},
  ) {}

  transform(value: unknown): z.output<S> {
    return parseInput(this.schema, value, this.toError, this.options);
  }
}
