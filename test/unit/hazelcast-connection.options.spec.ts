import { ownedClientConfig } from '../../lib/backends/hazelcast/hazelcast-connection.options';

describe("the config of a Hazelcast client the module owns", () => {
  const noop = () => undefined;

  it('closes a member connection silent for 15 s (the client waits 60 s), so the feeds hear of it and re-read', () => {
    expect(ownedClientConfig({}, noop).properties).toMatchObject({
      'hazelcast.client.heartbeat.timeout': 15_000,
      'hazelcast.client.operation.fail.on.indeterminate.state': true,
    });
  });

  it("keeps the application's own properties over its defaults", () => {
    const config = ownedClientConfig({ clientConfig: { properties: { 'hazelcast.client.heartbeat.timeout': 30_000, 'hazelcast.logging.level': 'WARN' } } }, noop);
    expect(config.properties).toMatchObject({ 'hazelcast.client.heartbeat.timeout': 30_000, 'hazelcast.logging.level': 'WARN' });
  });
});
