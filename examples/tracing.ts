import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * Call first thing in main.ts, before NestFactory.create. The gatekeeper's spans (gatekeeper.acquire,
 * gatekeeper.refresh, gatekeeper.job, gatekeeper.task) then go to `exporter`: the console here, your collector's
 * OTLP exporter in production (or let @opentelemetry/sdk-node register the provider).
 */
export function startTracing(exporter: SpanExporter = new ConsoleSpanExporter()): () => Promise<void> {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  return () => provider.shutdown();
}
