import type { ILogger } from './hazelcast-client.types';

/** Where the bridge writes: a logger with these levels (a Nest `Logger` is one). */
export interface LevelledLogger {
  error(message: string): void;
  warn(message: string): void;
  verbose(message: string): void;
  debug(message: string): void;
}

/** hazelcast-client's levels (its `LogLevel`), so this file needs no runtime import of the client. */
const LEVELS = { OFF: -1, ERROR: 0, WARN: 1, INFO: 2, DEBUG: 3, TRACE: 4 } as const;
type Level = (typeof LEVELS)[keyof typeof LEVELS];

/**
 * hazelcast-client's log lines through the application's logger (the module gives a Nest `Logger` of the context
 * `Hazelcast`), so they come out in the application's format (JSON with nestjs-pino, and so on) rather than the
 * client's own plain text. ERROR and WARN map to `error`
 * and `warn`, INFO to `verbose` (lifecycle and membership chatter), DEBUG and TRACE to `debug`. Lines below
 * `threshold` (the client's `hazelcast.logging.level` property, default `WARN`: a healthy boot prints nothing of
 * the client's) are dropped. While `quiet()` says so (the first connection, whose failure the gatekeeper reports
 * itself in one line) and while the client is offline (the gatekeeper says so once, and once when it is back), WARN
 * lines count as DEBUG: each failed attempt would otherwise print one. A connection's close counts as DEBUG always.
 */
export class HazelcastLoggerBridge implements ILogger {
  private readonly threshold: Level;

  constructor(
    private readonly logger: LevelledLogger,
    threshold: unknown,
    private readonly quiet: () => boolean = () => false,
  ) {
    const name = typeof threshold === 'string' ? threshold.toUpperCase() : 'WARN';
    this.threshold = name in LEVELS ? LEVELS[name as keyof typeof LEVELS] : LEVELS.WARN;
  }

  log(given: number, objectName: string, message: string, furtherInfo?: unknown): void {
    const level = given === LEVELS.WARN && (this.quiet() || folded(objectName, message)) ? LEVELS.DEBUG : given;
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

/**
 * A client warning the gatekeeper says in its own words: a connection closed (the cluster gone is "Cluster
 * unreachable", once; a member gone is told by membership). The client logs it before it reports itself offline.
 */
function folded(objectName: string, message: string): boolean {
  return objectName === 'Connection' && / closed\b/.test(message);
}

function describe(info: unknown): string {
  if (info === undefined || info === null || info === '') return '';
  if (info instanceof Error) return ` (${info.message})`;
  return typeof info === 'string' ? ` (${info})` : '';
}
