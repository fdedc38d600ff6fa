import type { Logger } from '@nestjs/common';
import type { ILogger } from '../backends/hazelcast/hazelcast-client.types';

/** hazelcast-client's levels (its `LogLevel`), so this file needs no runtime import of the client. */
const LEVELS = { OFF: -1, ERROR: 0, WARN: 1, INFO: 2, DEBUG: 3, TRACE: 4 } as const;
type Level = (typeof LEVELS)[keyof typeof LEVELS];

/**
 * hazelcast-client's log lines through a Nest `Logger` (give it the context `Hazelcast`), so they come out in the application's
 * format (JSON with nestjs-pino, and so on) rather than the client's own plain text. ERROR and WARN map to `error`
 * and `warn`, INFO to `verbose` (lifecycle and membership chatter), DEBUG and TRACE to `debug`. Lines below
 * `threshold` (the client's `hazelcast.logging.level` property, default `WARN`: a healthy boot prints nothing of
 * the client's) are dropped. While `quiet()` says so (the first connection, whose failure the gatekeeper reports
 * itself in one line), WARN lines count as DEBUG: each failed attempt would otherwise print one.
 */
export class HazelcastLoggerBridge implements ILogger {
  private readonly threshold: Level;

  constructor(
    private readonly logger: Pick<Logger, 'error' | 'warn' | 'verbose' | 'debug'>,
    threshold: unknown,
    private readonly quiet: () => boolean = () => false,
  ) {
    const name = typeof threshold === 'string' ? threshold.toUpperCase() : 'WARN';
    this.threshold = name in LEVELS ? LEVELS[name as keyof typeof LEVELS] : LEVELS.WARN;
  }

  log(given: number, objectName: string, message: string, furtherInfo?: unknown): void {
    const level = given === LEVELS.WARN && this.quiet() ? LEVELS.DEBUG : given;
    if (level > this.threshold || level === LEVELS.OFF) return;
    const line = `${objectName}: ${message}${describe(furtherInfo)}`;
    if (level === LEVELS.ERROR) this.logger.error(line);
    else if (level === LEVELS.WARN) this.logger.warn(line);
    else if (level === LEVELS.INFO) this.logger.verbose(line);
    else this.logger.debug(line);
  }

  error(objectName: string, message: string, furtherInfo?: unknown): void {
    this.log(LEVELS.ERROR, objectName, message, furtherInfo);
  }

  warn(objectName: string, message: string, furtherInfo?: unknown): void {
    this.log(LEVELS.WARN, objectName, message, furtherInfo);
  }

  info(objectName: string, message: string, furtherInfo?: unknown): void {
    this.log(LEVELS.INFO, objectName, message, furtherInfo);
  }

  debug(objectName: string, message: string, furtherInfo?: unknown): void {
    this.log(LEVELS.DEBUG, objectName, message, furtherInfo);
  }

  trace(objectName: string, message: string, furtherInfo?: unknown): void {
    this.log(LEVELS.TRACE, objectName, message, furtherInfo);
  }
}

function describe(info: unknown): string {
  if (info === undefined || info === null || info === '') return '';
  if (info instanceof Error) return ` (${info.message})`;
  return typeof info === 'string' ? ` (${info})` : '';
}
