import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A check-in monitor on a local port: records every check-in; `mode` says whether it answers, refuses (500) or hangs. */
export class CheckInMonitor {
  readonly heard: Array<{ path: string; query: URLSearchParams; at: number }> = [];
  mode: 'answer' | 'refuse' | 'hang' = 'answer';
  private readonly hanging: ServerResponse[] = [];
  private server?: Server;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const url = new URL(request.url ?? '/', 'http://monitor');
      this.heard.push({ path: url.pathname, query: url.searchParams, at: Date.now() });
      if (this.mode === 'hang') return void this.hanging.push(response);
      response.statusCode = this.mode === 'refuse' ? 500 : 200;
      response.end('OK');
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const response of this.hanging.splice(0)) response.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** What the check-ins of run `rid` asked for, in the order they came. */
  of(rid: string): string[] {
    return this.heard.filter((h) => h.query.get('rid') === rid).map((h) => h.path);
  }
}
