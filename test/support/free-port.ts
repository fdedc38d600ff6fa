import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * An HTTP address where nothing listens, for a node that cannot be reached: port 2 is privileged, outside the range
 * the system hands out, and not one `fetch` refuses to try (port 1 is), so a connection there is refused. A free port
 * would not do: another process of the run may take it before the connection is tried, and answer it.
 */
export const REFUSING_ADDRESS = 'http://127.0.0.1:2';
