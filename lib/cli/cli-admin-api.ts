import type { Presence } from '../presence/presence';
import { HTTP_ADDRESS_FORMAT, httpAddressBase } from '../presence/http-address.rules';
import { formatDuration } from '../core/duration';
import { AdminApiError, CliUsageError, LiveNodeUnreachableError } from './cli-errors';

/** How the CLI calls a live app's admin API (for what only the app's code answers), validated before connecting. */
export interface AdminApiOptions {
  /** The app's `admin.token`, sent as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** The app's `admin.path`, without slashes. */
  readonly path: string;
  /** Ask only this node (its acquirer name or instance id). */
  readonly node?: string;
}

/** The admin API options as given on the command line or in the environment. */
export interface RawAdminApiOptions {
  adminToken?: string;
  adminPath?: string;
  node?: string;
}

/** Validates the options of a command that asks a live app: the token must be there (an app's own guard cannot be passed). */
export function parseAdminApiOptions(raw: RawAdminApiOptions, command: string): AdminApiOptions {
  if (raw.adminToken === undefined || raw.adminToken === '') {
    throw new CliUsageError(
      `${command} asks a live app's admin API: set GATEKEEPER_ADMIN_TOKEN to the token it takes (the app's own GATEKEEPER_ADMIN_TOKEN, ` +
        'or its admin.token), or pass --admin-token',
      'adminToken',
    );
  }
  const path = (raw.adminPath ?? '').trim().replace(/^\/+|\/+$/g, '');
  if (path === '') throw new CliUsageError('invalid --admin-path: must be the app\'s admin.path (default gatekeeper)', 'adminPath');
  if (raw.node !== undefined && raw.node.trim() === '') throw new CliUsageError('invalid --node: must name a node (acquirer or instance)', 'node');
  return { token: raw.adminToken, path, ...(raw.node !== undefined && { node: raw.node.trim() }) };
}

/** A call to the admin API: `route` under the admin path (`jobs/BillingJobs.charge`). */
export interface AdminCall {
  readonly method: 'GET' | 'POST';
  readonly route: string;
  readonly body?: unknown;
  /** Give up on a node after this long. */
  readonly timeoutMs: number;
  /** The job asked about, for errors. */
  readonly job: string;
}

/** What a live node answered, and which node it was. */
export interface LiveAnswer<T> {
  readonly body: T;
  readonly node: { readonly acquirer: string; readonly instance: string; readonly url: string };
}

/** Connection errors that mean the request never reached the app: asking another node cannot make anything happen twice. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/**
 * Asks the live nodes that announce an `httpAddress` (presence, oldest first; only `options.node` if given), one at
 * a time, until one has the job. A node moves the question on only when it cannot have acted: it answered 404
 * (it has no such job, or no admin API there), or the connection was refused. Any other answer is final: a GET that
 * timed out is asked elsewhere, but a POST that timed out may have started a run, so it is reported, not repeated.
 */
export async function askLiveNode<T>(presences: readonly Presence[] | undefined, call: AdminCall, options: AdminApiOptions): Promise<LiveAnswer<T>> {
  const nodes = candidates(presences, options.node);
  const lacking: string[] = [];
  /** Of those, the nodes whose 404 was not the admin API's (no such route: no admin API there, or another path). */
  const withoutApi: string[] = [];
  const unreachable: string[] = [];
  for (const node of nodes) {
    const url = `${httpAddressBase(node.httpAddress!)}/${options.path}/${call.route}`;
    let response: Response;
    try {
      response = await callAdminApi(url, call, options.token);
    } catch (error) {
      const code = (error as { cause?: { code?: unknown } }).cause?.code;
      const why = unansweredWhy(error, call.timeoutMs);
      if (call.method === 'POST' && !(typeof code === 'string' && NOT_SENT.has(code))) {
        throw new LiveNodeUnreachableError(
          `${node.acquirer} at ${url}: ${why}; the request may have reached it, so no other node is asked (see: jobs history ${call.job})`,
        );
      }
      unreachable.push(`${node.acquirer} (${url}: ${why})`);
      continue;
    }
    const text = await response.text();
    const body = parseJson(text);
    if (response.ok) {
      if (body === undefined) throw new AdminApiError(`${node.acquirer} at ${url} answered ${response.status} without JSON`, response.status, node.acquirer, call.job);
      return { body: body as T, node: { acquirer: node.acquirer, instance: node.instance, url } };
    }
    const detail = body as { message?: unknown; reason?: unknown } | undefined;
    if (response.status === 404) {
      lacking.push(node.acquirer);
      if (detail?.reason !== 'UNKNOWN_JOB') withoutApi.push(node.acquirer);
      continue;
    }
    const message = typeof detail?.message === 'string' ? detail.message : text.slice(0, 200) || response.statusText;
    const hint = response.status === 401 || response.status === 403
      ? ' (check GATEKEEPER_ADMIN_TOKEN: it must be the token the app takes, its own GATEKEEPER_ADMIN_TOKEN or its admin.token)'
      : '';
    throw new AdminApiError(`${node.acquirer} answered ${response.status}: ${message}${hint}`, response.status, node.acquirer, call.job, typeof detail?.reason === 'string' ? detail.reason : undefined);
  }
  if (lacking.length > 0) {
    const also = unreachable.length > 0 ? `; not reached: ${unreachable.join(', ')}` : '';
    if (withoutApi.length === lacking.length) {
      throw new AdminApiError(
        `No live node serves the admin API at /${options.path} (asked ${lacking.join(', ')}${also}): mount it with the module option admin ` +
          "(admin: {} takes its token from the app's GATEKEEPER_ADMIN_TOKEN), or give its admin.path in --admin-path",
        404, lacking.join(','), call.job, 'NO_ADMIN_API',
      );
    }
    throw new AdminApiError(`No live node has job "${call.job}" (asked ${lacking.map((n) => withoutApi.includes(n) ? `${n} (no admin API at /${options.path})` : n).join(', ')}${also}; jobs are named Class.method)`, 404, lacking.join(','), call.job, 'UNKNOWN_JOB');
  }
  throw new LiveNodeUnreachableError(`No live node's admin API could be reached: ${unreachable.join(', ')}`);
}

/** Which live nodes have a job, asked all of them; and those that could not say. */
export interface JobCensus {
  /** Nodes whose admin API has the job. */
  readonly having: readonly string[];
  /** Nodes that could not say: not reached, without the admin API at the path, without an HTTP address, or refusing. */
  readonly unasked: readonly string[];
  /** Nodes that answered they have no such job. */
  readonly lacking: readonly string[];
}

/**
 * Asks every live node (presence) whether it has `job` (`GET jobs/<job>`): what `jobs forget` needs before it drops a
 * history, where one node that has the job is enough to refuse, and one that cannot say is reported, not guessed.
 */
export async function askEveryLiveNode(presences: readonly Presence[] | undefined, job: string, options: AdminApiOptions, timeoutMs: number): Promise<JobCensus> {
  if (presences === undefined) throw new LiveNodeUnreachableError('the live nodes could not be read (presence): no app to ask');
  const having: string[] = [];
  const unasked: string[] = [];
  const lacking: string[] = [];
  await Promise.all(presences.map(async (node) => {
    if (node.httpAddress === undefined) return void unasked.push(`${node.acquirer} (no HTTP address)`);
    const url = `${httpAddressBase(node.httpAddress)}/${options.path}/jobs/${encodeURIComponent(job)}`;
    try {
      const response = await callAdminApi(url, { method: 'GET', timeoutMs }, options.token);
      const body = parseJson(await response.text()) as { reason?: unknown } | undefined;
      if (response.ok) having.push(node.acquirer);
      else if (response.status === 404 && body?.reason === 'UNKNOWN_JOB') lacking.push(node.acquirer);
      else unasked.push(`${node.acquirer} (${url}: ${response.status}${response.status === 404 ? ', no admin API there' : ''})`);
    } catch (error) {
      unasked.push(`${node.acquirer} (${url}: ${unansweredWhy(error, timeoutMs)})`);
    }
  }));
  return { having: having.sort(), unasked: unasked.sort(), lacking: lacking.sort() };
}

/** The live nodes to ask, or why there are none. */
function candidates(presences: readonly Presence[] | undefined, wanted: string | undefined): Presence[] {
  if (presences === undefined) throw new LiveNodeUnreachableError('the live nodes could not be read (presence): no app to ask');
  const named = wanted === undefined ? presences : presences.filter((p) => p.acquirer === wanted || p.instance === wanted);
  if (wanted !== undefined && named.length === 0) {
    throw new LiveNodeUnreachableError(`no live node is named "${wanted}" (live: ${presences.map((p) => p.acquirer).join(', ') || 'none'})`);
  }
  const reachable = named.filter((p) => p.httpAddress !== undefined);
  if (reachable.length === 0) {
    if (named.length === 0) {
      throw new LiveNodeUnreachableError(
        'no live node announces itself in this cluster (no app running, membership: false in its module options, presence kept ' +
          'on another store than this one: point --backend at the store of the app\'s backends.presence, or another cluster or ' +
          '--map-prefix than the app\'s)',
      );
    }
    throw new LiveNodeUnreachableError(
      `no live node says where its HTTP server is (live: ${named.map((p) => p.acquirer).join(', ')}, none with an address): a node ` +
        "advertises the address it listens on once its app.listen() ran; if it does not listen, or others reach it elsewhere (a proxy, " +
        `NAT, a container's mapped port), set membership.httpAddress in its module options: ${HTTP_ADDRESS_FORMAT}`,
    );
  }
  return reachable;
}

/** One call of an app's admin API, with the token, as JSON, within the call's deadline. */
function callAdminApi(url: string, call: Pick<AdminCall, 'method' | 'body' | 'timeoutMs'>, token: string): Promise<Response> {
  return fetch(url, {
    method: call.method,
    headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(call.body !== undefined && { 'content-type': 'application/json' }) },
    ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
    signal: AbortSignal.timeout(call.timeoutMs),
  });
}

/** Why a call got no answer: its deadline, else the connection's error code or message. */
function unansweredWhy(error: unknown, timeoutMs: number): string {
  if ((error as Error).name === 'TimeoutError') return `no answer within ${formatDuration(timeoutMs)}`;
  return String((error as { cause?: { code?: unknown } }).cause?.code ?? (error as Error).message);
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
