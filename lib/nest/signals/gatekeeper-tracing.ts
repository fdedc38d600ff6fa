import { Inject, Injectable } from '@nestjs/common';
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import { libraryVersion } from '../../core/library-version';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import type { ObservedRun } from '../../schedules/run/run-observer';
import type { RunPipelineObserver } from '../../schedules/run/run-observers';

/** Span attributes: what a span is about and how it ended. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** What a traced piece of work can add to its span while it runs or as it ends. */
export interface TraceSpan {
  /** Adds attributes (undefined values are left out). */
  set(attributes: SpanAttributes): void;
}

const NO_SPAN: TraceSpan = { set: () => undefined };

/** `@opentelemetry/api`, if the app has it (looked up once); `null` when it does not. */
let api: typeof OtelApi | null | undefined;
function otel(): typeof OtelApi | null {
  if (api === undefined) {
    try {
      api = createRequire(__filename)('@opentelemetry/api') as typeof OtelApi;
    } catch {
      api = null;
    }
  }
  return api;
}

/**
 * OpenTelemetry spans around the module's decisions and runs, through `@opentelemetry/api` (an optional peer:
 * without it, or with `tracing: false`, the work runs with no span and no cost). Spans go to whatever tracer
 * provider the app registered (its OpenTelemetry SDK); with none, the API's no-op tracer. In the run seam (a
 * {@link RunPipelineObserver}), each run of a job is a `gatekeeper.job` span, the parent of what the job calls.
 * Used inside the module.
 */
@Injectable()
export class GatekeeperTracing implements RunPipelineObserver {
  private readonly tracer?: OtelApi.Tracer;

  constructor(@Inject(GATEKEEPER_OPTIONS) options: ResolvedGatekeeperOptions) {
    const found = options.tracing ? otel() : null;
    this.tracer = found?.trace.getTracer('nestjs-gatekeeper', libraryVersion());
  }

  /** Wraps a run of a job in its `gatekeeper.job` span. */
  around<T>(run: ObservedRun, work: () => Promise<T>): Promise<T> {
    const attributes = { 'gatekeeper.semaphore': run.semaphore, 'gatekeeper.job': run.job, 'gatekeeper.token': run.token };
    return this.span('gatekeeper.job', attributes, async (span) => {
      const result = await work();
      span.set({ 'gatekeeper.outcome': 'finished' });
      return result;
    });
  }

  /**
   * Runs `work` in an active span `name` (child of the caller's span, parent of what it calls), with `attributes`;
   * an error is recorded on the span (status ERROR) and thrown on.
   */
  async span<T>(name: string, attributes: SpanAttributes, work: (span: TraceSpan) => Promise<T>): Promise<T> {
    const tracer = this.tracer;
    const found = otel();
    if (!tracer || !found) return work(NO_SPAN);
    const span = tracer.startSpan(name, { attributes: defined(attributes) });
    // No SDK registered (the API's no-op tracer): the span records nothing, so no context is set up for it.
    if (!span.isRecording()) {
      span.end();
      return work(NO_SPAN);
    }
    return found.context.with(found.trace.setSpan(found.context.active(), span), async () => {
      try {
        return await work({ set: (more) => span.setAttributes(defined(more)) });
      } catch (error) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: found.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    });
  }
}

function defined(attributes: SpanAttributes): OtelApi.Attributes {
  const out: OtelApi.Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
