// What the scripts that run throwaway local servers share (hazelcast.mjs, postgres.mjs, redis.mjs, mariadb.mjs):
// free ports, and servers killed with their folders if this process exits without stopping them.
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';

const HOST = '127.0.0.1';

/**
 * Finds `n` distinct free TCP ports on 127.0.0.1. Holds them all open at once so
 * they differ; something else may still grab one before it is used.
 * @param {number} n
 * @returns {Promise<number[]>}
 */
export async function freePorts(n) {
  const servers = [];
  try {
    for (let i = 0; i < n; i++) {
      const server = createServer();
      servers.push(server);
      server.listen(0, HOST);
      await once(server, 'listening');
    }
    return servers.map((s) => s.address().port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((res) => s.close(() => res()))));
  }
}

// Servers still running, killed (and their folders deleted) if this process exits without stopping them
// (process.exit(), an uncaught error), so none is left behind.
const leftBehind = new Map(); // child process -> its folder
process.on('exit', () => {
  for (const [child, dir] of leftBehind) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Kills `child` and deletes `dir` if this process exits while it still runs. */
export function killOnExit(child, dir) {
  leftBehind.set(child, dir);
  child.once('exit', () => leftBehind.delete(child));
}
