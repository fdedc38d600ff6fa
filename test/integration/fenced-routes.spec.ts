import { Body, Controller, Post, type INestApplication } from '@nestjs/common';
import { HttpService } from '@nestjs/axios';
import { Test } from '@nestjs/testing';
import { firstValueFrom } from 'rxjs';
import { Fenced, FencingToken, GatekeeperModule } from '../../lib';
import { FENCING_TOKEN_HEADER, fencedFetch, fencingHeaders } from '../../lib/fencing';
import { CapturingLogger } from '../support/capturing-logger';
import { uniquePrefix } from '../support/test-cluster';
import { testRedisUrl } from '../support/test-redis';

const accepted: Array<{ token: number; note: string }> = [];

@Controller('ledger')
class LedgerController {
  @Post()
  @Fenced('ledger')
  add(@Body() body: { note: string }, @FencingToken() token: number): { token: number } {
    accepted.push({ token, note: body.note });
    return { token };
  }
}

/*
 * A `@Fenced` route of a Nest app on Express, its fences on the test run's Redis: what a caller's token gets (the
 * caller's side, `fencingHeaders` and `fencedFetch`), two instances of the service sharing its fences, and a bad
 * decorator argument.
 */
describe('@Fenced routes', () => {
  const prefix = uniquePrefix('fenced-routes');
  const apps: INestApplication[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    for (const acquirer of ['receiver-1', 'receiver-2']) {
      const moduleRef = await Test.createTestingModule({
        imports: [GatekeeperModule.forRoot({ identity: { acquirer }, backend: 'redis', redis: { url: testRedisUrl(), mapPrefix: prefix }, membership: false })],
        controllers: [LedgerController],
      }).setLogger(new CapturingLogger()).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.listen(0, '127.0.0.1');
      apps.push(app);
      urls.push(`${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/ledger`);
    }
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  const post = async (url: string, note: string, headers: Record<string, string>) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ note }) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('accepts a token at least the highest, refuses an older one with 409 naming the resource and both tokens, on every instance', async () => {
    expect(await post(urls[0], 'first', fencingHeaders(5))).toEqual({ status: 201, body: { token: 5 } });
    expect((await post(urls[1], 'same holder again', fencingHeaders(5))).status).toBe(201);
    expect((await post(urls[1], 'newer', fencingHeaders(9))).status).toBe(201);
    const stale = await post(urls[0], 'stale', fencingHeaders(7));
    expect(stale).toEqual({
      status: 409,
      body: { statusCode: 409, error: 'StaleFencingToken', resource: 'ledger', token: 7, newer: 9, message: 'Fenced call to "ledger" refused: token 7 is stale, the resource already accepted token 9 from a newer holder' },
    });
    expect(accepted).toEqual([{ token: 5, note: 'first' }, { token: 5, note: 'same holder again' }, { token: 9, note: 'newer' }]);
  });

  it('refuses a call without the header, or with a malformed one, with 400, before the handler', async () => {
    const before = accepted.length;
    const missing = await post(urls[0], 'no header', {});
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe(`A fenced call to "ledger": the call carries no ${FENCING_TOKEN_HEADER} header (send it with fencingHeaders(lease) or fencedFetch(lease))`);
    for (const bad of ['0', '-1', '1.5', 'nine', '99999999999999999']) {
      const answer = await post(urls[0], 'bad header', { [FENCING_TOKEN_HEADER]: bad });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toContain(`header must be a whole number from 1 up, got "${bad}"`);
    }
    expect(accepted.length).toBe(before);
  });

  it('fencedFetch sends the lease\'s token on every call, and a lease that knows it lapsed sends nothing', async () => {
    let valid = true;
    const lease = { permit: { fencingToken: 12 }, assertValid: () => { if (!valid) throw new Error('lost'); } };
    const call = fencedFetch(lease);
    const answer = await call(urls[1], { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ note: 'through fetch' }) });
    expect(answer.status).toBe(201);
    valid = false;
    await expect(call(urls[1], { method: 'POST' })).rejects.toThrow('lost');
    expect(accepted.at(-1)).toEqual({ token: 12, note: 'through fetch' });
  });

  it('@nestjs/axios\'s HttpService sends it with fencingHeaders(lease), and reads the 409\'s body', async () => {
    const http = new HttpService();
    const lease = { epoch: 30 };
    const answer = await firstValueFrom(http.post(urls[0], { note: 'through axios' }, { headers: fencingHeaders(lease) }));
    expect(answer.data).toEqual({ token: 30 });
    const stale = await firstValueFrom(http.post(urls[1], { note: 'stale through axios' }, { headers: fencingHeaders({ epoch: 29 }) })).catch((error: { response?: { status: number; data: unknown } }) => error.response);
    expect(stale).toMatchObject({ status: 409, data: { resource: 'ledger', token: 29, newer: 30 } });
  });

  it('refuses a resource that is no name when the decorator is applied', () => {
    expect(() => Fenced('')).toThrow('@Fenced(""): invalid resource: must be a non-empty string');
  });
});
