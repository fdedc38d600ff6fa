import { ScheduleService } from 'nestjs-gatekeeper';
import { MemoryBackend } from 'nestjs-gatekeeper/testing';
import type { TestingModule } from '@nestjs/testing';
import { createNode } from './capability-backends.spec-example';

describe('guide example (docs/backends.md): a backend per capability', () => {
  const nodes: TestingModule[] = [];
  afterAll(() => Promise.all(nodes.map((node) => node.close())));

  it('keeps runtime schedules on the backend given for them, shared by the nodes on it', async () => {
    // Two nodes on one store (here: one memory backend, which each module given it joins as a node of its own).
    const store = new MemoryBackend();
    nodes.push(await createNode(store, 'node-a'), await createNode(store, 'node-b'));
    const [a, b] = nodes.map((node) => node.get(ScheduleService));
    const created = await a.upsert({ id: 'report-acme', cron: '0 0 3 * * *', handler: 'tenant-report', duration: '15m', paused: true });
    expect(created).toMatchObject({ outcome: 'created' });
    expect(await b.schedule('report-acme')).toMatchObject({ id: 'report-acme' });
    // Permits stayed in each node's own memory: none of them is in the shared store.
    expect(store.records.map('semaphores').size).toBe(0);
  });
});
