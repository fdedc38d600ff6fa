/*
 * A TCP proxy that holds every chunk `delayMs` in each direction, in order: a Redis across a network, for the tasks
 * rows' diagnostic BENCH_REDIS_DELAY_MS (bench/redis-tasks.ts). Node's timers fire on whole milliseconds, so a delay
 * below 1 ms is about 1 ms each way; the round trip the rows saw is printed with them.
 */
import { connect, createServer, type Socket } from 'node:net';

/** Forwards what `from` sends to `to`, each chunk `delayMs` after it came. */
function delayed(from: Socket, to: Socket, delayMs: number): void {
  const queue: Array<{ at: number; chunk: Buffer }> = [];
  let timer: NodeJS.Timeout | undefined;
  const drain = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0].at <= now) to.write(queue.shift()!.chunk);
    if (queue.length > 0) timer = setTimeout(drain, queue[0].at - now);
  };
  from.on('data', (chunk: Buffer) => {
    queue.push({ at: performance.now() + delayMs, chunk });
    timer ??= setTimeout(drain, delayMs);
  });
  from.on('close', () => to.destroy());
  from.on('error', () => to.destroy());
}

/** Listens on a free loopback port and forwards to `port` there, delayed; resolves with its port and what closes it. */
export async function delayProxy(port: number, delayMs: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    delayed(client, upstream, delayMs);
    delayed(upstream, client, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the delay proxy has no port');
  return {
    port: address.port,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
