import type { INestApplication, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GatekeeperModule, TaskService } from '../../lib';
import { CapturingLogger } from './capturing-logger';
import { testClientConfig } from './test-cluster';

/** An app with the admin API under `/ops` and task handlers, on the test member, listening on a free port. */
export interface TaskAdminApp {
  app: INestApplication;
  tasks: TaskService;
  /** Calls an admin route (`/tasks/...`) with the token (or another, or none); answers the status and the JSON body. */
  call(method: string, path: string, body?: unknown, token?: string | null): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON of many shapes, read by tests
}

/** Starts one node with `providers` (task handlers) and the admin API protected by `token`. */
export async function startTaskAdminApp(options: { mapPrefix: string; acquirer: string; token: string; providers: Type[] }): Promise<TaskAdminApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [GatekeeperModule.forRoot({
      identity: { acquirer: options.acquirer },
      hazelcast: { clientConfig: testClientConfig(), mapPrefix: options.mapPrefix },
      admin: { path: 'ops', token: options.token },
      membership: false,
      maxClockSkew: '50ms',
      tasks: { scanInterval: '200ms' },
    })],
    providers: options.providers,
  }).setLogger(new CapturingLogger()).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const base = `${await app.getUrl()}/ops`.replace('[::1]', '127.0.0.1');
  return {
    app,
    tasks: app.get(TaskService),
    call: async (method, path, body, token = options.token) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}
