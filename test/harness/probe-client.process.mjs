// A Hazelcast client in a process of its own, so a test can show that a pid-scoped proxy fault hits this
// process and no other. Connects with the config given as JSON in argv[2], prints READY, then answers
// stdin lines "<id> get <map> <key>" with stdout lines {"id", "value"} or {"id", "error"}.
import { createInterface } from 'node:readline';
import hz from 'hazelcast-client';

const client = await hz.Client.newHazelcastClient(JSON.parse(process.argv[2]));
process.stdout.write('READY\n');
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const [id, op, map, key] = line.trim().split(/\s+/);
  if (op !== 'get') {
    say({ id, error: `unknown op ${op}` });
    continue;
  }
  client.getMap(map).then((m) => m.get(key)).then((value) => say({ id, value }), (error) => say({ id, error: String(error) }));
}
await client.shutdown();
