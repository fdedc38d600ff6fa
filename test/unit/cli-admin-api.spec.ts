import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { askLiveNode, parseAdminApiOptions, type AdminCall } from '../../lib/cli/cli-admin-api';
import { AdminApiError, CliUsageError, LiveNodeUnreachableError } from '../../lib/cli/cli-errors';
import type { Presence } from '../../lib/presence/presence';
import { REFUSING_ADDRESS } from '../support/free-port';

/** A local admin API stand-in that records what it was asked and answers as told (or never). */
async function fakeNode(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string; asked: string[] }> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    asked.push(`${req.method} ${req.url} ${req.headers.authorization}`);
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}`, asked };
}

const json = (status: number, body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const never = () => undefined;

const presence = (acquirer: string, httpAddress?: string): Presence => ({
  instance: `${acquirer}/1`, acquirer, group: 'production', startedAt: 0, version: '0.1.0', refreshedAt: 0, expiresAt: 1, ...(httpAddress !== undefined && { httpAddress }),
});
const options = { token: 'admin-token-0123456789', path: 'ops' };
// Long enough for a fake node in this process to answer on a loaded machine; the hanging one costs it once per call.
const ANSWER_MS = 2_000;
const describeCall: AdminCall = { method: 'GET', route: 'jobs/Billing.charge', timeoutMs: ANSWER_MS, job: 'Billing.charge' };
const runCall: AdminCall = { method: 'POST', route: 'jobs/Billing.charge/run', body: { timeout: 1000 }, timeoutMs: ANSWER_MS, job: 'Billing.charge' };

/**
 * How the CLI asks live apps: it moves on from a node only when that node cannot have acted (404, connection
 * refused; a GET that timed out too), and never repeats a POST that may have reached an app.
 */
describe("the CLI's calls to a live app's admin API", () => {
  const servers: Server[] = [];
  const node = async (answer: (req: IncomingMessage, res: ServerResponse) => void) => {
    const fake = await fakeNode(answer);
    servers.push(fake.server);
    return fake;
  };
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('sends the token to <address>/<path>/<route> and answers the body and the node', async () => {
    const good = await node(json(200, { job: 'Billing.charge' }));
    const answer = await askLiveNode([presence('app-1', `${good.url}/`)], describeCall, options);
    expect(answer).toEqual({ body: { job: 'Billing.charge' }, node: { acquirer: 'app-1', instance: 'app-1/1', url: `${good.url}/ops/jobs/Billing.charge` } });
    expect(good.asked).toEqual([`GET /ops/jobs/Billing.charge Bearer ${options.token}`]);
    // An address without a scheme is taken as http.
    const bare = good.url.replace('http://', '');
    expect((await askLiveNode([presence('app-1', bare)], describeCall, options)).body).toEqual({ job: 'Billing.charge' });
  });

  it('asks the next node when one has no such job, or refuses the connection; all without the job is UNKNOWN_JOB', async () => {
    const lacking = await node(json(404, { statusCode: 404, reason: 'UNKNOWN_JOB', job: 'Billing.charge' }));
    const good = await node(json(200, { requestId: 'r1' }));
    const dead = REFUSING_ADDRESS;
    const nodes = [presence('dead', dead), presence('lacking', lacking.url), presence('good', good.url)];
    expect((await askLiveNode(nodes, runCall, options)).node.acquirer).toBe('good');
    expect(good.asked).toHaveLength(1);
    const none = await askLiveNode([presence('lacking', lacking.url), presence('dead', dead)], describeCall, options).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(AdminApiError);
    expect(none).toMatchObject({ status: 404, reason: 'UNKNOWN_JOB', job: 'Billing.charge', message: expect.stringContaining('asked lacking; not reached: dead') });
  });

  it('asks another node after a GET timed out, but never repeats a POST that may have reached an app', async () => {
    const hanging = await node(never);
    const good = await node(json(200, { ok: true }));
    const nodes = [presence('hanging', hanging.url), presence('good', good.url)];
    expect((await askLiveNode(nodes, describeCall, options)).node.acquirer).toBe('good');
    const posted = await askLiveNode(nodes, runCall, options).catch((e: unknown) => e);
    expect(posted).toBeInstanceOf(LiveNodeUnreachableError);
    expect((posted as Error).message).toMatch(new RegExp(`^hanging at .*: no answer within (2s|2000ms); the request may have reached it, so no other node is asked`));
    expect(good.asked.filter((a) => a.startsWith('POST'))).toEqual([]);
  });

  it('takes any other error answer as final: a refused token, a run refused with its reason code', async () => {
    const refusing = await node(json(403, { statusCode: 403, message: 'The admin token (or the console session) is not valid for this request' }));
    const conflict = await node(json(409, { statusCode: 409, message: 'Run now of "Billing.charge" refused (PAUSED): paused', job: 'Billing.charge', reason: 'PAUSED' }));
    const good = await node(json(200, {}));
    const forbidden = await askLiveNode([presence('refusing', refusing.url), presence('good', good.url)], describeCall, options).catch((e: unknown) => e);
    expect(forbidden).toMatchObject({ status: 403, node: 'refusing', message: expect.stringContaining('GATEKEEPER_ADMIN_TOKEN') });
    const paused = await askLiveNode([presence('conflict', conflict.url), presence('good', good.url)], runCall, options).catch((e: unknown) => e);
    expect(paused).toMatchObject({ status: 409, node: 'conflict', reason: 'PAUSED', message: 'conflict answered 409: Run now of "Billing.charge" refused (PAUSED): paused' });
    expect(good.asked).toEqual([]);
  });

  it('says when the nodes asked serve no admin API there: what to mount, or which path to give', async () => {
    const plain = await node(json(404, { statusCode: 404, message: 'Cannot GET /ops/jobs/Billing.charge', error: 'Not Found' }));
    const lacking = await node(json(404, { statusCode: 404, reason: 'UNKNOWN_JOB', job: 'Billing.charge' }));
    const none = await askLiveNode([presence('plain', plain.url)], describeCall, options).catch((e: unknown) => e);
    expect(none).toMatchObject({
      status: 404, reason: 'NO_ADMIN_API',
      message: "No live node serves the admin API at /ops (asked plain): mount it with the module option admin (admin: {} takes its token from the app's GATEKEEPER_ADMIN_TOKEN), or give its admin.path in --admin-path",
    });
    const mixed = await askLiveNode([presence('plain', plain.url), presence('lacking', lacking.url)], describeCall, options).catch((e: unknown) => e);
    expect(mixed).toMatchObject({ reason: 'UNKNOWN_JOB', message: 'No live node has job "Billing.charge" (asked plain (no admin API at /ops), lacking; jobs are named Class.method)' });
  });

  it('says why there is nobody to ask, and checks its options before anything is asked', async () => {
    await expect(askLiveNode(undefined, describeCall, options)).rejects.toThrow(LiveNodeUnreachableError);
    // Live nodes without an address: what advertises one, and what to set, in which format.
    await expect(askLiveNode([presence('app-1')], describeCall, options)).rejects.toThrow(
      'no live node says where its HTTP server is (live: app-1, none with an address): a node advertises the address it listens on once its ' +
        "app.listen() ran; if it does not listen, or others reach it elsewhere (a proxy, NAT, a container's mapped port), set membership.httpAddress " +
        'in its module options: http(s)://host:port[/prefix], e.g. http://10.0.0.5:3000 (a bare host:port means http://)',
    );
    await expect(askLiveNode([], describeCall, options)).rejects.toThrow(/^no live node announces itself in this cluster \(no app running, membership: false/);
    await expect(askLiveNode([presence('app-1', 'http://x')], describeCall, { ...options, node: 'app-9' })).rejects.toThrow('no live node is named "app-9" (live: app-1)');
    expect(() => parseAdminApiOptions({ adminPath: 'gatekeeper' }, 'jobs run')).toThrow(CliUsageError);
    expect(() => parseAdminApiOptions({ adminPath: 'gatekeeper' }, 'jobs run')).toThrow(expect.objectContaining({ field: 'adminToken' }));
    expect(parseAdminApiOptions({ adminToken: 't', adminPath: '/ops/gk/' }, 'jobs run')).toEqual({ token: 't', path: 'ops/gk' });
  });
});
