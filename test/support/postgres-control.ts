import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from 'pg';

interface Answer {
  ok: boolean;
  cmd?: string;
  error?: string;
  url?: string;
}

/**
 * A PostgreSQL server of a test's own, to fault: `scripts/postgres.mjs start --control` in a child process, which
 * kills (SIGKILL, a crash), freezes (SIGSTOP) and starts the server on command. The data stays across a kill, as on a real crash.
 */
export class ControlledPostgres {
  private readonly waiters: Array<(answer: Answer) => void> = [];
  url = '';

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.waiters.shift()?.(JSON.parse(line) as Answer));
    child.once('exit', (code, signal) => {
      for (const waiter of this.waiters.splice(0)) waiter({ ok: false, error: `postgres control exited (${signal ?? code})` });
    });
  }

  /** The port the server listens on (127.0.0.1). */
  get port(): number {
    return Number(new URL(this.url).port);
  }

  static async start(): Promise<ControlledPostgres> {
    const child = spawn(process.execPath, [join(__dirname, '../../scripts/postgres.mjs'), 'start', '--control'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const server = new ControlledPostgres(child);
    const started = await server.next();
    if (!started.ok) throw new Error(`PostgreSQL did not start: ${started.error}`);
    server.url = started.url!;
    return server;
  }

  /** SIGKILLs the server and resolves once it is gone. */
  kill(): Promise<void> {
    return this.command('kill');
  }

  /** Starts it again (crash recovery first) and resolves once it accepts connections. */
  startAgain(): Promise<void> {
    return this.command('start');
  }

  /** SIGSTOPs the server and every backend: connections stay open and nothing answers (a stalled machine). */
  freeze(): Promise<void> {
    return this.command('freeze');
  }

  /** SIGCONTs what {@link freeze} stopped. */
  resume(): Promise<void> {
    return this.command('resume');
  }

  /** Saves the whole database as it is now (`pg_dump`), for {@link restoreFresh}. */
  dump(): Promise<void> {
    return this.command('dump');
  }

  /** Restores that dump into a new server (`initdb`) in this one's place and port: a restore from a backup. */
  restoreFresh(): Promise<void> {
    return this.command('restore-fresh');
  }

  /** Starts a streaming replica (`pg_basebackup`) beside the server. */
  startStandby(): Promise<void> {
    return this.command('standby');
  }

  /** Stops the replica: it misses every commit from now on. */
  stopStandby(): Promise<void> {
    return this.command('standby-stop');
  }

  /** Kills the server and promotes the replica in its place and port (a failover that loses what it missed). */
  failover(): Promise<void> {
    return this.command('failover');
  }

  /** The pids of the backends serving the connections `applicationName` opened that match `where` (on pg_stat_activity). */
  backends(applicationName: string, where = 'true'): Promise<number[]> {
    return this.query(`select pid from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid() and (${where})`, [applicationName])
      .then((rows) => rows.map((row) => Number(row.pid)));
  }

  /** Ends one backend (`pg_terminate_backend`), as an administrator or a failing network would; whether it was there. */
  terminate(pid: number): Promise<boolean> {
    return this.query('select pg_terminate_backend($1) as ended', [pid]).then(([row]) => row.ended === true);
  }

  private async query(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
    const client = new Client({ connectionString: this.url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as Array<Record<string, unknown>>;
    } finally {
      await client.end();
    }
  }

  /** Stops it and deletes its data. */
  async quit(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.stdin!.end('stop\n');
    await once(this.child, 'exit');
  }

  private async command(cmd: string): Promise<void> {
    const answered = this.next();
    this.child.stdin!.write(`${cmd}\n`);
    const answer = await answered;
    if (!answer.ok) throw new Error(`postgres ${cmd} failed: ${answer.error}`);
  }

  private next(): Promise<Answer> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
