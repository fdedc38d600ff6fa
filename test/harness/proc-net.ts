/*
 * Which process owns a TCP connection, read from Linux's /proc: a process's socket inodes are the
 * `socket:[inode]` links in /proc/<pid>/fd, and /proc/net/tcp maps inodes to local and remote ports.
 * The proxy uses it to apply a fault to one client process's connections only.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** One TCP socket of a process, as the kernel lists it. */
export interface ProcSocket {
  localPort: number;
  remotePort: number;
  /** Kernel state in hex: '01' established, '0A' listening. */
  state: string;
  inode: number;
}

/** Whether this machine has /proc/net/tcp (Linux), so pid targeting can work. */
export function canResolvePids(): boolean {
  return existsSync('/proc/net/tcp');
}

/** The IPv4 and IPv6 TCP sockets owned by `pid` (none if it has exited or is not ours to read). */
export function tcpSocketsOf(pid: number): ProcSocket[] {
  const inodes = socketInodes(pid);
  if (inodes.size === 0) return [];
  return [...readTcpTable('/proc/net/tcp'), ...readTcpTable('/proc/net/tcp6')].filter((s) => inodes.has(s.inode));
}

/** Local ports of `pid`'s TCP sockets: the client ends of its connections. */
export function localPortsOf(pid: number): Set<number> {
  return new Set(tcpSocketsOf(pid).map((s) => s.localPort));
}

function socketInodes(pid: number): Set<number> {
  const inodes = new Set<number>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(Number(match[1]));
    } catch {
      // closed between readdir and readlink
    }
  }
  return inodes;
}

function readTcpTable(file: string): ProcSocket[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  // "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
  return text.split('\n').slice(1).filter(Boolean).map((line) => {
    const f = line.trim().split(/\s+/);
    return {
      localPort: parseInt(f[1].split(':')[1], 16),
      remotePort: parseInt(f[2].split(':')[1], 16),
      state: f[3],
      inode: Number(f[9]),
    };
  });
}
