import type { LoggerService } from '@nestjs/common';

/** A Nest logger that keeps what it is given instead of printing it, so tests can read the log. */
export class CapturingLogger implements LoggerService {
  readonly entries: Array<{ level: string; message: string }> = [];
  log(message: unknown): void {
    this.push('log', message);
  }
  error(message: unknown): void {
    this.push('error', message);
  }
  warn(message: unknown): void {
    this.push('warn', message);
  }
  debug(message: unknown): void {
    this.push('debug', message);
  }
  verbose(message: unknown): void {
    this.push('verbose', message);
  }
  /** Messages at `level` containing `text`. */
  find(level: string, text: string | RegExp): string[] {
    return this.entries
      .filter((e) => e.level === level && (typeof text === 'string' ? e.message.includes(text) : text.test(e.message)))
      .map((e) => e.message);
  }
  private push(level: string, message: unknown): void {
    this.entries.push({ level, message: message instanceof Error ? message.message : String(message) });
  }
}
