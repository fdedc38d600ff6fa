/*
 * The nemesis's connection reset for a store reached without a proxy (PostgreSQL): the kernel destroys a process's
 * established TCP sockets to one port (`ss -K`, root only), as a firewall or a NAT table that forgets them would. The
 * client gets ECONNABORTED on its next read or write, the server a reset.
 */
import { execFileSync } from 'node:child_process';
import { tcpSocketsOf } from './proc-net';

/** Destroys every established connection `pid` holds to 127.0.0.1:`port`; returns how many there were. */
export function resetConnections(pid: number, port: number): number {
  const locals = tcpSocketsOf(pid).filter((s) => s.remotePort === port && s.state === '01').map((s) => s.localPort);
  for (const local of locals) {
    execFileSync('ss', ['-K', 'dst', '127.0.0.1', 'dport', '=', `:${port}`, 'sport', '=', `:${local}`], { stdio: 'ignore' });
  }
  return locals.length;
}
