/*
 * The nemesis's node side: an app node as a real process that a test can freeze (SIGSTOP: a long GC pause or a
 * stalled VM), resume, crash (SIGKILL) or stop (SIGTERM, graceful). With a history file, each of these is
 * recorded as a nemesis event, so bounds can be measured from it.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { startApp, type AppProcess } from '../support/app-process';
import { recordNemesis } from './history';
import { storeTargetEnv, type StoreTarget } from './store-target';
import { workloadEnv, type WorkloadSettings } from './workload';

/** A node process under the test's control. */
export interface NodeProcess {
  name: string;
  pid: number;
  /** Its stdout and stderr so far. */
  output(): string;
  /** SIGSTOP. */
  freeze(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGKILL, and waits until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (after SIGCONT, in case it is frozen) and waits for the graceful exit; returns the exit code. */
  terminate(): Promise<number | null>;
  /** Whether the process has exited. */
  exited(): boolean;
}

/** What every fixture node process is told: its name, its history file, and which cluster state to use. */
export interface NodeBasics {
  /** NODE_NAME: the acquirer, and the `node` of its history events. */
  name: string;
  historyFile: string;
  /** The Hazelcast cluster, the PostgreSQL server (`{ postgresUrl }`) or the Redis server (`{ redisUrl }`). */
  cluster: StoreTarget;
  mapPrefix: string;
}

/** The environment every fixture node process reads (its app-specific settings go next to it). */
export function nodeBasicsEnv(s: NodeBasics): NodeJS.ProcessEnv {
  return {
    NODE_NAME: s.name,
    HISTORY_FILE: s.historyFile,
    MAP_PREFIX: s.mapPrefix,
    ...storeTargetEnv(s.cluster),
  };
}

/** Starts the workload app (workload-app.ts) as node `settings.name` and waits until it is READY. */
export function startWorkloadNode(settings: WorkloadSettings): Promise<NodeProcess> {
  return startNodeProcess(join(__dirname, 'workload-app.ts'), settings.name, workloadEnv(settings), settings.historyFile);
}

/** Starts any fixture app script (TypeScript, printing READY when booted) as a controllable node. */
export async function startNodeProcess(script: string, name: string, env: NodeJS.ProcessEnv, historyFile?: string): Promise<NodeProcess> {
  const app: AppProcess = await startApp(script, name, env);
  const { child } = app;
  const note = (action: string) => historyFile && recordNemesis(historyFile, action, name);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const exit = once(child, 'exit').catch(() => undefined);
  return {
    name,
    pid: child.pid!,
    output: app.output,
    exited,
    freeze: () => {
      note('freeze');
      child.kill('SIGSTOP');
    },
    resume: () => {
      child.kill('SIGCONT');
      note('resume');
    },
    kill: async () => {
      if (exited()) return;
      note('kill');
      child.kill('SIGKILL');
      await exit;
    },
    terminate: async () => {
      if (!exited()) {
        note('terminate');
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        await exit;
      }
      return child.exitCode;
    },
  };
}
