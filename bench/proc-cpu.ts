/*
 * CPU time of whole processes from /proc (utime + stime), so a row can say what the member, Redis, the worker
 * processes and the bench process itself each spent over its measured window. Linux only; elsewhere every reading
 * is null and the rows leave the CPU fields out.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces), so index 0 is field 3 (state). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU ms each thread of this process has used so far, summed by thread name: `main` for the main thread, the rest by
 * their names (V8's helper threads, the compiler's and the collector's, are `node`; libuv's pool, `libuv-worker`).
 */
export function threadCpuMs(): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return byName;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = tid === String(process.pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S);
    } catch {
      // the thread ended
    }
  }
  return byName;
}

/** CPU ms `pid` has used so far (user + system), or undefined when it is gone or /proc is missing. */
export function cpuMsOf(pid: number): number | undefined {
  const fields = statFields(pid);
  if (!fields) return undefined;
  // utime and stime are fields 14 and 15 of stat(5).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

/**
 * CPU ms the whole process tree under `root` has used so far: every live member's own time plus the time of the
 * children it already reaped (cutime + cstime, fields 16 and 17 of stat(5)), so a PostgreSQL backend that came and
 * went (a closed connection, reaped by the postmaster) still counts. The root is read last, so a child reaped
 * between the two readings is in its parent's count rather than in neither. Undefined when the root is gone.
 */
export function treeCpuMsOf(root: number): number | undefined {
  let ticks = 0;
  for (const pid of descendantsOf(root)) {
    const fields = statFields(pid);
    if (fields) ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  const fields = statFields(root);
  if (!fields) return undefined;
  ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  return (ticks * 1000) / TICKS_PER_S;
}

/** Every process below `pid` (children, their children...), found by parent id. */
export function descendantsOf(pid: number): number[] {
  let all: Array<{ pid: number; ppid: number }>;
  try {
    all = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((d) => {
      const fields = statFields(Number(d));
      return fields ? [{ pid: Number(d), ppid: Number(fields[1]) }] : [];
    });
  } catch {
    return [];
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const p of all) if (p.ppid === parent) {
      found.push(p.pid);
      queue.push(p.pid);
    }
  }
  return found;
}

/** The parent of `pid`, or undefined when it is gone. */
export function parentOf(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : undefined;
}

/** The command name of `pid` (`java`, `redis-server`, `node`). */
export function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Bytes `pid` has read through read-like system calls so far (sockets included): `rchar` of /proc/<pid>/io. */
export function bytesReadOf(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/io`, 'utf8').split('\n').find((l) => l.startsWith('rchar:'));
    return line ? Number(line.split(':')[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Processes whose CPU a row reports, by role; `workers` may change from window to window. */
export interface CpuParts {
  bench: number;
  member: number[];
  redis?: number;
  /** The postmaster of the bench's PostgreSQL server: it and every process below it (backends, background workers) count. */
  postgres?: number;
  workers?: number[];
}

/** CPU ms of each role over a window; null where the role has no process (or /proc is missing). */
export interface WindowCpu {
  bench: number | null;
  member: number | null;
  redis: number | null;
  /** The PostgreSQL server's whole process tree (see {@link treeCpuMsOf}); null when the window has no server. */
  postgres: number | null;
  workers: number | null;
  windowMs: number;
}

const sum = (pids: number[] | undefined) => {
  if (!pids?.length) return null;
  const values = pids.map(cpuMsOf);
  return values.some((v) => v === undefined) ? null : values.reduce((a, b) => a! + b!, 0)!;
};

function reading(parts: CpuParts) {
  return { bench: sum([parts.bench]), member: sum(parts.member), redis: parts.redis === undefined ? null : sum([parts.redis]),
    postgres: parts.postgres === undefined ? null : (treeCpuMsOf(parts.postgres) ?? null), workers: sum(parts.workers), at: performance.now() };
}

/** Starts a window now; `stop()` (call it before any of the processes exits) gives what each role used since. */
export function cpuWindow(parts: CpuParts): { stop(): WindowCpu } {
  const start = reading(parts);
  return {
    stop() {
      const end = reading(parts);
      const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : Math.round((b - a) * 10) / 10);
      return { bench: delta(start.bench, end.bench), member: delta(start.member, end.member), redis: delta(start.redis, end.redis), postgres: delta(start.postgres, end.postgres), workers: delta(start.workers, end.workers), windowMs: Math.round(end.at - start.at) };
    },
  };
}
