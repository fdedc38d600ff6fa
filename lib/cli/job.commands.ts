import type { HistoryRecordStore } from '../schedules/history-record.store';
import { refuseUnknownSubcommands } from './unknown-subcommand';
import { Option, type Command } from 'commander';
import { parseDuration } from '../core/duration';
import { ENV } from '../core/env-vars';
import { emptyHistory, type NodeTicks } from '../schedules/job-history';
import { readableHistory, skippedTicks } from '../schedules/job-history.rules';
import { jobHealthWithin, type JobHealthDetails } from '../schedules/job-health.rules';
import { parseHistoryLimit, parseRunNowTimeout, validateJobName } from '../schedules/job-request.input';
import type { JobDescription, JobHistoryView, JobPauseResult, RunNowResult } from '../schedules/job-view';
import { askEveryLiveNode, askLiveNode, parseAdminApiOptions, type RawAdminApiOptions } from './cli-admin-api';
import type { Execute } from './cli-command';
import { CliUsageError, JobDownError, JobNotGoneError, NoJobHistoryError, RunNotCompletedError } from './cli-errors';
import { describeText, historyText, jobListText, listedJobs, pauseText, runNowText, slotsText } from './cli-job-format';
import { slotLedger } from '../schedules/slot-ledger';
import { InvalidInputError } from '../core/errors/invalid-input.error';

/** Slack on top of a run now's own timeout before the CLI stops waiting for the app's answer. */
const ANSWER_SLACK_MS = 10_000;
const DEFAULT_RUN_TIMEOUT = '30s';
/** How long `jobs run --wait` waits for the run to end, given no duration. */
const DEFAULT_RUN_WAIT = '5m';

/** A job's name as typed (the name rule of lib/core/names), or a usage error: the admin API and the history key jobs by it (`Class.method`). */
function checkJob(job: string): string {
  try {
    return validateJobName(job);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    throw new CliUsageError(`invalid <job>: ${error.reason} (jobs are named Class.method)`, 'job');
  }
}

/** A job request's field checked before connecting: a usage error naming the option. */
function checked<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidInputError) throw new CliUsageError(`invalid --${error.field}: ${error.reason}`, error.field);
    throw error;
  }
}

/** The options of a command that calls the apps' admin API (describe, run, pause, resume, forget): its token and path. */
function callsAdminApi(command: Command): Command {
  return command
    .addOption(new Option('--admin-token <token>', "the token the app's admin API takes (prefer the environment variable, which the app reads too)").env(ENV.adminToken))
    .addOption(new Option('--admin-path <path>', "the app's admin.path").env(ENV.adminPath).default('gatekeeper'));
}

/** The options of a command that asks one live app (describe, run, pause, resume). */
function asksLiveApp(command: Command): Command {
  return callsAdminApi(command.option('--node <name>', 'ask this live node (acquirer name or instance id) rather than the first that has the job'));
}

const LIVE_NOTE =
  "Needs a live app: only its code knows the job's cron, zone and permit, and only it can run it. The CLI asks the " +
  'admin API of the live nodes (presence: each advertises the address its app listens on, or its membership.httpAddress), ' +
  "with GATEKEEPER_ADMIN_TOKEN (the app's admin: {} takes the same variable), until one has the job.";
const CLUSTER_NOTE = 'Reads the cluster alone (no app needed): what the nodes wrote, in batches every schedules.history.flushInterval.';

/** How long `jobs pause` and `jobs resume` wait for the app's answer (an edit's own deadline is 10 s). */
const EDIT_ANSWER_MS = 20_000;

const PAUSE_NOTE =
  "A @ClusterSingleton job is paused by its semaphore (permits to 0, the count remembered for the resume): every job " +
  'sharing that semaphore stops too, and the answer names those the node asked knows. A runtime schedule is paused ' +
  "alone (as schedules pause <id>). A @LeaderOnly method's semaphore is its election's: only with --force.";

/**
 * Adds `jobs` and its subcommands: `list` and `history` read the run history the nodes write to the cluster (no app
 * needed); `describe`, `run`, `pause` and `resume` need the app's code (only it knows a job's semaphore), so they ask
 * a live node's admin API (found through presence).
 */
export function addJobCommands(program: Command, execute: Execute): void {
  const jobs = refuseUnknownSubcommands(program.command('jobs')).description('scheduled jobs (@ClusterSingleton): list and history read the cluster alone; describe, run, pause and resume ask a live app');

  jobs
    .command('list', { isDefault: true })
    .description('every job with a history in the cluster: last run (trigger, node, token, outcome), runs, failures, missed instants, skipped ticks')
    .addHelpText('after', `\n${CLUSTER_NOTE} Holders, pause and next runs: jobs describe <job>.`)
    .action(() =>
      execute(() => async (_admin, stores) => {
        const history = await stores.history();
        const [histories, ticks] = await Promise.all([history.list(), history.readTicks()]);
        const listed = listedJobs(histories, ticks);
        return { json: listed, text: jobListText(listed) };
      }),
    );

  readsHistory(jobs, execute, 'history', "a job's runs, newest first (trigger, scheduled instant, node, token, start, duration, outcome, error), its missed instants and skipped ticks by reason", 'runs',
    async (job, limit, store) => {
      const [stored, ticks] = await Promise.all([store.read(job), store.readTicks()]);
      if (!stored && !ticks.some((t: NodeTicks) => t.skipped[job] !== undefined)) throw await noHistory(job, store);
      const shown = readableHistory(stored?.history ?? emptyHistory(job));
      const view: JobHistoryView = {
        job,
        runs: limit === undefined ? shown.runs : shown.runs.slice(0, limit),
        lastFailure: shown.lastFailure,
        counts: shown.counts,
        missed: shown.missed,
        slots: slotLedger(shown, limit),
        skipped: skippedTicks(job, ticks),
      };
      return { json: view, text: historyText(view) };
    });

  readsHistory(jobs, execute, 'slots', "a job's slot ledger, newest first: each scheduled instant that ran (node, start, duration, outcome), each run now, and the instants that did not run with why (missed, paused, overlap, noEligibleNode)", 'rows',
    async (job, limit, store) => {
      const stored = await store.read(job);
      if (!stored) throw await noHistory(job, store);
      const slots = slotLedger(readableHistory(stored.history), limit);
      return { json: { job, slots }, text: slotsText(job, slots) };
    });

  callsAdminApi(jobs.command('forget <job>'))
    .description("drop the run history of a job whose code is gone, so it leaves jobs list: refused while a live node has the job")
    .option('--force', 'without asking the live nodes (when none serves the admin API, or one that cannot be reached is gone for good)')
    .addHelpText('after', `\n${CLUSTER_NOTE} Every live node is asked whether it has the job (its admin API, with GATEKEEPER_ADMIN_TOKEN). A node that runs it again starts a new history.`)
    .action((job: string, o: RawAdminApiOptions & { force?: boolean }) =>
      execute(() => {
        checkJob(job);
        const api = o.force ? undefined : parseAdminApiOptions(o, 'jobs forget');
        return async (_admin, stores) => {
          const store = await stores.history();
          if (!(await store.read(job))) throw new NoJobHistoryError(job, (await store.list()).map((h) => h.history.job).sort());
          if (api) {
            const census = await askEveryLiveNode(await stores.presences(), job, api, 10_000);
            if (census.having.length > 0) {
              throw new JobNotGoneError(`"${job}" is not gone: ${census.having.join(', ')} ${census.having.length === 1 ? 'has' : 'have'} it; nothing removed (forget a job once no node runs its code)`);
            }
            if (census.unasked.length > 0) {
              throw new JobNotGoneError(`could not ask every live node whether it has "${job}": ${census.unasked.join('; ')}; nothing removed (--force forgets it without asking)`);
            }
          }
          await store.remove(job);
          return { json: { forgotten: job }, text: `Forgot job "${job}": its run history is removed, and it leaves jobs list (a node that runs it again starts a new history).` };
        };
      }),
    );

  asksLiveApp(jobs.command('describe <job>'))
    .description("everything about a job: definition, holders with token and expiry, cron and zone, the next 10 fire instants, last run, last failure, missed and skipped counts")
    .addHelpText('after', `\n${LIVE_NOTE}`)
    .action((job: string, o: RawAdminApiOptions) =>
      execute(() => {
        checkJob(job);
        const api = parseAdminApiOptions(o, 'jobs describe');
        return async (_admin, stores) => {
          const timeoutMs = 10_000;
          const answer = await askLiveNode<JobDescription>(await stores.presences(), { method: 'GET', route: `jobs/${encodeURIComponent(job)}`, timeoutMs, job }, api);
          return { json: answer.body, text: describeText(answer.body, `${answer.node.acquirer} at ${answer.node.url}`) };
        };
      }),
    );

  asksLiveApp(jobs.command('health <job>'))
    .description("a job's health from the cluster's history: up while it completed a run within --within anywhere (or is paused), else down with when it last completed and what failed since")
    .requiredOption('--within <duration>', 'how recent its last completed run must be (26h, 90m)')
    .addHelpText('after', `\n${LIVE_NOTE} Exit 5 when it is down, for a cron monitor's script.`)
    .action((job: string, o: RawAdminApiOptions & { within: string }) =>
      execute(() => {
        checkJob(job);
        checked(() => jobHealthWithin(job, o.within));
        const api = parseAdminApiOptions(o, 'jobs health');
        return async (_admin, stores) => {
          const route = `jobs/${encodeURIComponent(job)}/health?within=${encodeURIComponent(o.within)}`;
          const answer = await askLiveNode<JobHealthDetails & { status: 'up' | 'down' }>(await stores.presences(), { method: 'GET', route, timeoutMs: 10_000, job }, api);
          const health = answer.body;
          if (health.status === 'down') throw new JobDownError(`${health.message ?? `${job} is down`} (answered by ${answer.node.acquirer})`, job);
          const last = health.paused ? 'paused' : `last completed ${new Date(health.lastSuccessAt!).toISOString()}`;
          return { json: health, text: `${job}: up (${last}${health.failuresSince > 0 ? `; ${health.failuresSince} run(s) since ended otherwise` : ''}; answered by ${answer.node.acquirer})` };
        };
      }),
    );

  asksLiveApp(jobs.command('run <job>'))
    .description('run a job once, now, in the cluster: on its holder (else on a node its definition admits), under a permit, marked manual in the history')
    .option('--timeout <duration>', `give up if no node started it within this long (the request is then withdrawn and never runs); at most 5m`, DEFAULT_RUN_TIMEOUT)
    .option('--wait [duration]', `wait for the run to end too, at most this long after it started (default ${DEFAULT_RUN_WAIT}; at most 5m): exit 4 unless it completed`)
    .addHelpText('after', `\n${LIVE_NOTE} Refused (exit 1, with its reason code) when the job is paused, inside its last run's lockAtLeastFor or a recovery wait, no live node may run it, or none started it in time.`)
    .action((job: string, o: RawAdminApiOptions & { timeout: string; wait?: string | true }) =>
      execute(() => {
        checkJob(job);
        const timeoutMs = checked(() => parseRunNowTimeout(job, o.timeout)) ?? parseDuration(DEFAULT_RUN_TIMEOUT, job, 'timeout');
        const waitMs = o.wait === undefined ? undefined : checked(() => parseRunNowTimeout(job, o.wait === true ? DEFAULT_RUN_WAIT : o.wait, 'wait'));
        const api = parseAdminApiOptions(o, 'jobs run');
        return async (_admin, stores) => {
          const answer = await askLiveNode<RunNowResult>(
            await stores.presences(),
            {
              method: 'POST', route: `jobs/${encodeURIComponent(job)}/run`, body: { timeout: timeoutMs, ...(waitMs !== undefined && { wait: waitMs }) },
              timeoutMs: timeoutMs + (waitMs ?? 0) + ANSWER_SLACK_MS, job,
            },
            api,
          );
          const run = answer.body;
          if (waitMs !== undefined && run.outcome !== 'completed') {
            const how = run.outcome === undefined ? `was still running when the wait (${o.wait === true ? DEFAULT_RUN_WAIT : o.wait}) ran out`
              : `ended ${run.outcome}${run.error ? `: ${run.error}` : ''}`;
            throw new RunNotCompletedError(`${job} started on ${run.node} under token ${run.token} and ${how}`, job, run.outcome ?? 'running', run.node, run.token);
          }
          return { json: run, text: runNowText(run, answer.node.acquirer) };
        };
      }),
    );

  for (const action of ['pause', 'resume'] as const) {
    const what = action === 'pause'
      ? 'pause a job by its name: no node runs it until resumed (its semaphore paused, or its runtime schedule)'
      : 'resume a paused job: its semaphore gets back the permits it had before the pause, or its runtime schedule fires again';
    asksLiveApp(jobs.command(`${action} <job>`))
      .description(what)
      .option('--force', "also a @LeaderOnly method, whose semaphore is its election's (the leader steps down while paused)")
      .addHelpText('after', `\n${LIVE_NOTE} ${PAUSE_NOTE}`)
      .action((job: string, o: RawAdminApiOptions & { force?: boolean }) =>
        execute(() => {
          checkJob(job);
          const api = parseAdminApiOptions(o, `jobs ${action}`);
          return async (_admin, stores) => {
            const route = `jobs/${encodeURIComponent(job)}/${action}${o.force === true ? '?force=true' : ''}`;
            const answer = await askLiveNode<JobPauseResult>(await stores.presences(), { method: 'POST', route, timeoutMs: EDIT_ANSWER_MS, job }, api);
            return { json: answer.body, text: pauseText(answer.body, answer.node.acquirer) };
          };
        }),
      );
  }
}

/**
 * Adds `jobs <name> <job> [--limit n]`: a reading of one job's run history from the cluster alone (no app needed),
 * its job name checked and its limit parsed before any store call.
 */
function readsHistory(
  jobs: Command,
  execute: Execute,
  name: string,
  description: string,
  unit: string,
  answer: (job: string, limit: number | undefined, store: HistoryRecordStore) => Promise<{ json: unknown; text: string }>,
): void {
  jobs
    .command(`${name} <job>`)
    .description(description)
    .option('--limit <n>', `at most this many ${unit} (default: every one kept)`)
    .addHelpText('after', `\n${CLUSTER_NOTE}`)
    .action((job: string, o: { limit?: string }) =>
      execute(() => {
        checkJob(job);
        const limit = checked(() => parseHistoryLimit(job, o.limit));
        return async (_admin, stores) => answer(job, limit, await stores.history());
      }),
    );
}

/** A job with no history here, naming the jobs that have one. */
async function noHistory(job: string, store: HistoryRecordStore): Promise<NoJobHistoryError> {
  return new NoJobHistoryError(job, (await store.list()).map((h) => h.history.job).sort());
}
