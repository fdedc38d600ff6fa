import { Client } from 'hazelcast-client';

/** Records every client `Client.newHazelcastClient` creates from now on, until `restore()`. */
export function recordNewClients(): { created: Client[]; restore: () => void } {
  const created: Client[] = [];
  const original = Client.newHazelcastClient.bind(Client);
  const spy = jest.spyOn(Client, 'newHazelcastClient').mockImplementation(async (config) => {
    const client = await original(config);
    created.push(client);
    return client;
  });
  return { created, restore: () => spy.mockRestore() };
}
