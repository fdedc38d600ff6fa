import { Test, type TestingModule } from '@nestjs/testing';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, globalAgent, type Server as HttpsServer } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { Client, type ClientConfig } from 'hazelcast-client';
import { GatekeeperModule, GatekeeperService, InvalidInputError, TaskService } from '../../lib';
import type { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { CANARY_MAP } from '../../lib/backends/hazelcast/hazelcast-partition-canaries';
import { libraryMapNames } from '../../lib/backends/hazelcast/library-maps';
import { GATEKEEPER_CONNECTION } from '../../lib/nest/gatekeeper.constants';
import { CapturingLogger } from '../support/capturing-logger';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';

/** A self-signed certificate for 127.0.0.1 / localhost, made for this run. */
function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gatekeeper-tls-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const [memberHost, memberPort] = (() => {
  const [host, port] = testCluster().addresses[0].split(':');
  return [host, Number(port)] as const;
})();

async function listen(server: TlsServer | HttpsServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function boot(clientConfig: ClientConfig, extra: object = {}): Promise<TestingModule> {
  const app = await Test.createTestingModule({
    imports: [GatekeeperModule.forRoot({
      identity: { acquirer: 'config-node' },
      membership: false,
      hazelcast: { clientConfig, mapPrefix: uniquePrefix('client-config') },
      definitions: [{ name: 'job', duration: '30s' }],
      ...extra,
    })],
  }).setLogger(new CapturingLogger()).compile();
  await app.init();
  return app;
}

/**
 * The whole hazelcast-client configuration reaches the client the module creates: checked on the wire, through a
 * TLS-only front of the real member (TLS on members is Enterprise) and a local stand-in of Hazelcast Cloud's
 * discovery endpoint.
 */
describe('hazelcast.clientConfig passes through to the client', () => {
  const tls = selfSignedCertificate();
  const apps: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  /** A TLS-only front of the member (TLS on members is Enterprise): what clients send through it, decrypted. */
  async function tlsFront(): Promise<{ port: number; handshakes: () => number; plaintext: () => string; close: () => void }> {
    let plaintext = '';
    let handshakes = 0;
    const front = createTlsServer({ key: tls.key, cert: tls.cert }, (secure) => {
      handshakes++;
      const member = connect(memberPort, memberHost);
      secure.on('data', (chunk: Buffer) => {
        plaintext += chunk.toString('latin1');
      });
      secure.pipe(member).pipe(secure);
      const end = () => {
        secure.destroy();
        member.destroy();
      };
      secure.on('error', end).on('close', end);
      member.on('error', end).on('close', end);
    });
    const port = await listen(front);
    return { port, handshakes: () => handshakes, plaintext: () => plaintext, close: () => front.close() };
  }

  /** Client config through the front: TLS trusting this run's certificate, one connection (the member's plain address is never dialled). */
  function throughFront(port: number): ClientConfig {
    return {
      ...testClientConfig(),
      network: {
        clusterMembers: [`127.0.0.1:${port}`],
        ssl: { enabled: true, sslOptions: { ca: tls.cert, servername: 'localhost' } },
        smartRouting: false,
      },
    };
  }

  it('TLS, routing, labels, instance name and properties: the client talks TLS to a TLS-only front and works', async () => {
    const front = await tlsFront();
    try {
      const app = await boot({ ...throughFront(front.port), clientLabels: ['billing-app'], instanceName: 'config-passthrough' });
      apps.push(app);
      expect(await app.get(GatekeeperService).tryAcquire('job')).toMatchObject({ granted: true });
      expect(front.handshakes()).toBeGreaterThan(0);
      expect(front.plaintext()).toContain('billing-app');
      const client = app.get<HazelcastConnection>(GATEKEEPER_CONNECTION).client!;
      expect(client.getName()).toBe('config-passthrough');
      const config = client.getConfig();
      expect(config.network).toMatchObject({ smartRouting: false, ssl: { enabled: true } });
      expect(config.properties?.['hazelcast.logging.level']).toBe('OFF');
    } finally {
      front.close();
    }
  });

  it('security credentials: sent in the authentication (an open-source member, which has no security, refuses them)', async () => {
    const front = await tlsFront();
    try {
      const failed = await boot(
        { ...throughFront(front.port), security: { usernamePassword: { username: 'gatekeeper-operator', password: 'operator-secret' } } },
        { connectTimeout: '2s' },
      ).then(() => undefined, (error: unknown) => error);
      expect(failed).toBeInstanceOf(Error);
      expect(front.plaintext()).toContain('gatekeeper-operator');
      expect(front.plaintext()).toContain('operator-secret');
    } finally {
      front.close();
    }
  });

  it('Hazelcast Cloud discovery: the token is used, and GATEKEEPER_HZ_MEMBERS is not added next to it', async () => {
    // The jest global setup exported GATEKEEPER_HZ_MEMBERS: the client refuses explicit members next to a token.
    expect(process.env.GATEKEEPER_HZ_MEMBERS).toBeTruthy();
    const asked: string[] = [];
    const discovery = createHttpsServer({ key: tls.key, cert: tls.cert }, (request, response) => {
      asked.push(request.url ?? '');
      const address = `${memberHost}:${memberPort}`;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify([{ 'private-address': address, 'public-address': address }]));
    });
    const port = await listen(discovery);
    // The client asks the discovery endpoint with Node's https and its global agent: trust this run's certificate.
    const ca = globalAgent.options.ca;
    globalAgent.options.ca = tls.cert;
    try {
      const { clusterName, properties } = testClientConfig();
      const app = await boot({
        clusterName,
        network: { hazelcastCloud: { discoveryToken: 'token-for-this-test' } },
        properties: { ...properties, 'hazelcast.client.cloud.url': `https://localhost:${port}` },
      });
      apps.push(app);
      expect(await app.get(GatekeeperService).tryAcquire('job')).toMatchObject({ granted: true });
      expect(asked).toContainEqual('/cluster/discovery?token=token-for-this-test');
      expect(app.get<HazelcastConnection>(GATEKEEPER_CONNECTION).client!.getConfig().network?.clusterMembers).toEqual([]);
      // What start-up messages name as the target: the cloud, not the default address the client never tried.
      expect(app.get<HazelcastConnection>(GATEKEEPER_CONNECTION).target().members).toEqual(['Hazelcast Cloud (network.hazelcastCloud.discoveryToken)']);
    } finally {
      globalAgent.options.ca = ca;
      discovery.close();
    }
  });
});

describe('near caches on the library\'s maps are refused', () => {
  it.each([
    ['the exact map name', (prefix: string) => `${prefix}.semaphores`, 'semaphores'],
    ['a wildcard pattern', (prefix: string) => `${prefix.slice(0, 6)}*`, 'semaphores'],
    ['a suffix wildcard', () => '*.presence', 'presence'],
    ['the canary map', () => '__gatekeeper.*', 'partition-canaries'],
    ['the default fallback', () => 'default', 'semaphores'],
  ])('%s, naming the option path and the map', async (_, pattern, map) => {
    const mapPrefix = uniquePrefix('near');
    const key = pattern(mapPrefix);
    const error = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        hazelcast: { mapPrefix, clientConfig: { ...testClientConfig(), nearCaches: { 'app.sessions': {}, [key]: { invalidateOnChange: true } } } },
      })],
    }).setLogger(new CapturingLogger()).compile().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ field: `hazelcast.clientConfig.nearCaches[${JSON.stringify(key)}]`, kind: undefined });
    expect((error as Error).message).toContain(`would cover the library's map "${map === 'partition-canaries' ? CANARY_MAP : `${mapPrefix}.${map}`}"`);
    expect((error as Error).message).toContain('stale');
  });

  it('accepts near caches of the app\'s own maps, and they reach the client', async () => {
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        membership: false,
        hazelcast: { mapPrefix: uniquePrefix('near-ok'), clientConfig: { ...testClientConfig(), nearCaches: { 'app.*': { maxIdleSeconds: 60 } } } },
        definitions: [{ name: 'job', duration: '30s' }],
      })],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    try {
      expect(await app.get(GatekeeperService).tryAcquire('job')).toMatchObject({ granted: true });
      expect(app.get<HazelcastConnection>(GATEKEEPER_CONNECTION).client!.getConfig().nearCaches?.['app.*']).toMatchObject({ maxIdleSeconds: 60 });
    } finally {
      await app.close();
    }
  });

  it('refuses an injected client whose own config has one', async () => {
    const client = await Client.newHazelcastClient({ ...testClientConfig(), nearCaches: { 'gatekeeper.*': {} } });
    try {
      const error = await Test.createTestingModule({ imports: [GatekeeperModule.forRoot({ hazelcast: { client } })] })
        .setLogger(new CapturingLogger()).compile().then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ field: 'hazelcast.client', message: expect.stringContaining('its config has a near cache "gatekeeper.*"') });
    } finally {
      await client.shutdown();
    }
  });

  it('knows every map a node opens (permits, presence, tasks, canaries)', async () => {
    const mapPrefix = uniquePrefix('maps');
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ hazelcast: { mapPrefix, clientConfig: testClientConfig() }, definitions: [{ name: 'job', duration: '30s' }] })],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    try {
      await app.get(GatekeeperService).tryAcquire('job');
      await app.get(TaskService).submit({ type: 'report', name: 'daily' });
      const client = app.get<HazelcastConnection>(GATEKEEPER_CONNECTION).client!;
      const opened = (await client.getDistributedObjects())
        .map((object) => object.getName())
        .filter((name) => name.startsWith(`${mapPrefix}.`) || name.startsWith('__gatekeeper.'));
      expect(opened.length).toBeGreaterThanOrEqual(4);
      expect(libraryMapNames(mapPrefix)).toEqual(expect.arrayContaining(opened));
    } finally {
      await app.close();
    }
  });
});
