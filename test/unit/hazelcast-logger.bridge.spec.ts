import { Logger } from '@nestjs/common';
import { HazelcastLoggerBridge } from '../../lib/backends/hazelcast/hazelcast-logger.bridge';
import { hazelcastStoreOptions } from '../../lib/backends/hazelcast/hazelcast-module-connection';
import { resolveGatekeeperOptions } from '../../lib/nest/options/gatekeeper-options.resolver';

function recorder() {
  const lines: string[] = [];
  const at = (level: string) => (message: unknown) => void lines.push(`${level} ${String(message)}`);
  return { lines, logger: { error: at('error'), warn: at('warn'), verbose: at('verbose'), debug: at('debug') } };
}

describe('hazelcast-client logs through Nest', () => {
  it('maps the client levels onto Nest levels and drops lines below the configured level', () => {
    const { lines, logger } = recorder();
    const bridge = new HazelcastLoggerBridge(logger as never, 'DEBUG');
    bridge.error('ConnectionManager', 'boom', new Error('cause'));
    bridge.warn('ConnectionManager', 'careful');
    bridge.info('LifecycleService', 'HazelcastClient is STARTED');
    bridge.debug('Invocation', 'detail');
    bridge.trace('Invocation', 'too much');
    expect(lines).toEqual([
      'error ConnectionManager: boom (cause)',
      'warn ConnectionManager: careful',
      'verbose LifecycleService: HazelcastClient is STARTED',
      'debug Invocation: detail',
    ]);
  });

  it('defaults to WARN (a healthy boot prints none of the client\'s INFO lines), honours OFF and the level asked for', () => {
    const byDefault = recorder();
    const bridge = new HazelcastLoggerBridge(byDefault.logger as never, undefined);
    bridge.info('LifecycleService', 'HazelcastClient is STARTED');
    bridge.debug('X', 'hidden');
    bridge.warn('ConnectionManager', 'connection lost');
    expect(byDefault.lines).toEqual(['warn ConnectionManager: connection lost']);
    const off = recorder();
    new HazelcastLoggerBridge(off.logger as never, 'OFF').error('X', 'hidden');
    expect(off.lines).toEqual([]);
    const info = recorder();
    new HazelcastLoggerBridge(info.logger as never, 'info').info('LifecycleService', 'HazelcastClient is STARTED');
    expect(info.lines).toEqual(['verbose LifecycleService: HazelcastClient is STARTED']);
  });

  it('counts WARN as DEBUG while told to stay quiet (the first connection): dropped by default, shown when DEBUG is asked for', () => {
    let connecting = true;
    const byDefault = recorder();
    const quietByDefault = new HazelcastLoggerBridge(byDefault.logger as never, undefined, () => connecting);
    const debug = recorder();
    const quietAtDebug = new HazelcastLoggerBridge(debug.logger as never, 'DEBUG', () => connecting);
    for (const bridge of [quietByDefault, quietAtDebug]) bridge.warn('WaitStrategy', 'Unable to get live cluster connection');
    connecting = false;
    for (const bridge of [quietByDefault, quietAtDebug]) bridge.warn('ConnectionManager', 'connection lost');
    expect(byDefault.lines).toEqual(['warn ConnectionManager: connection lost']);
    expect(debug.lines).toEqual(['debug WaitStrategy: Unable to get live cluster connection', 'warn ConnectionManager: connection lost']);
  });
});

describe('the module\'s Hazelcast client options', () => {
  const moduleOptions = (options: ReturnType<typeof resolveGatekeeperOptions>, env: NodeJS.ProcessEnv) =>
    hazelcastStoreOptions(options.hazelcast, options, env, new Logger('Hazelcast'));
  const env = { GATEKEEPER_HZ_MEMBERS: '10.0.0.1:5701, 10.0.0.2:5701', GATEKEEPER_HZ_CLUSTER_NAME: 'prod' };

  it('takes members and cluster name from the environment when the client config leaves them out', () => {
    const options = moduleOptions(resolveGatekeeperOptions({}), env);
    expect(options.clientConfig?.clusterName).toBe('prod');
    expect(options.clientConfig?.network?.clusterMembers).toEqual(['10.0.0.1:5701', '10.0.0.2:5701']);
    expect(options.connectTimeoutMs).toBe(30_000);
    expect(options.clientConfig?.customLogger).toBeInstanceOf(HazelcastLoggerBridge);
  });

  it('keeps what the client config says, and gives no connect timeout to a background start', () => {
    const given = resolveGatekeeperOptions({
      connectInBackground: true,
      hazelcast: { clientConfig: { clusterName: 'mine', network: { clusterMembers: ['h:1'] } } },
    });
    const options = moduleOptions(given, env);
    expect(options.clientConfig?.clusterName).toBe('mine');
    expect(options.clientConfig?.network?.clusterMembers).toEqual(['h:1']);
    expect(options.connectTimeoutMs).toBe(Infinity);
    expect(moduleOptions(resolveGatekeeperOptions({}), {}).clientConfig?.network).toBeUndefined();
  });
});
