import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { GatekeeperModule, GatekeeperService, SemaphoreAdminService, type GatekeeperModuleOptions } from '../../lib';
import { askUnknownNames, heapAfterGc, type NameCallers } from '../fixtures/unknown-names';
import { UNDEFINED_SEMAPHORE_LABEL } from '../../lib/nest/readouts/gatekeeper-metrics';
import { CapturingLogger } from '../support/capturing-logger';
import { tsScriptArgs } from '../support/ts-script';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

// The collector of the V8 running this test (jest runs without --expose-gc): measured heap sizes are live data only.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MB = 1024 * 1024;

/**
 * Issue 21, finding 8: a caller that builds semaphore names from input must not grow the process for ever. Every
 * distinct unknown name used to stay in the node's view (about 140 bytes each) and in the metrics' label sets.
 * Asks for names no definition has, through the service a caller uses, and measures the live heap after a first
 * batch and after many more: what per-name state remains must stay under its caps, not grow with the names. (On a
 * real member each name costs two round trips: 30k names there, not a million.)
 */
describe('unknown semaphore names do not grow the heap', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(options: GatekeeperModuleOptions): Promise<NameCallers> {
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ membership: false, ...options })],
    }).setLogger(new CapturingLogger()).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    return { gatekeeper: app.get(GatekeeperService), semaphores: app.get(SemaphoreAdminService) };
  }

  it('memory store, with a state dump: 400k names after the first 100k leave the heap as it was', async () => {
    // In a process of its own: a jest worker's heap also holds what earlier test files left, which made every
    // collection (and this test) ten times slower in a full run.
    const child = spawn(process.execPath, ['--expose-gc', ...tsScriptArgs(join(__dirname, '../fixtures/unknown-names.process.ts'))], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FIRST: '100000', TOTAL: '500000' },
    });
    let output = '';
    child.stdout.on('data', (c) => (output += String(c)));
    child.stderr.on('data', (c) => (output += String(c)));
    const [code] = await once(child, 'exit');
    expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });
    const { before, after, cpuMs } = JSON.parse(/RESULT (.*)/.exec(output)![1]) as { before: number; after: number; cpuMs: number };
    const grownMb = (after - before) / MB;
    process.stdout.write(
      `memory store: heap ${(before / MB).toFixed(1)} MB after 100k names, ${(after / MB).toFixed(1)} MB after 500k ` +
        `(${grownMb.toFixed(1)} MB more; ${(cpuMs / 1000).toFixed(1)} s of CPU)\n`,
    );
    // 400k names at the ~140 bytes each they used to cost would be ~56 MB; what is kept per name is capped now.
    expect(grownMb).toBeLessThan(20);
  });

  it('metrics: decisions on unknown names share one label instead of a series per name', async () => {
    const registry = new Registry();
    const services = await start({ backend: 'memory', metrics: { registry } });
    await services.semaphores.putDefinition({ name: 'known-job', permits: 1, duration: '1m' });
    await askUnknownNames(services, 0, 20_000, 1000);
    expect((await services.gatekeeper.tryAcquire('known-job')).granted).toBe(true);
    const series = async (metric: string) => (await registry.getSingleMetric(`gatekeeper_${metric}`)!.get()).values;
    const denied = await series('permit_denied_total');
    const attempts = await series('permit_attempts_total');
    // Every label set is a series prom-client keeps for ever (hundreds of bytes each): 20k of them used to be kept.
    expect(denied.map((v) => v.labels.semaphore)).toEqual([UNDEFINED_SEMAPHORE_LABEL]);
    expect(denied[0].value).toBe(19_800); // every decision (readDefinition, 1 name in 100, decides nothing)
    expect(attempts.map((v) => v.labels.semaphore).sort()).toEqual([UNDEFINED_SEMAPHORE_LABEL, 'known-job']);
  });

  it('Hazelcast store on a real member: 25k names after the first 5k leave the heap as it was', async () => {
    const services = await start({ hazelcast: { clientConfig: testClientConfig(), mapPrefix: uniquePrefix('unknown-names') }, stateDumpInterval: '1h' });
    await askUnknownNames(services, 0, 5_000, 500);
    const before = heapAfterGc(gc);
    await askUnknownNames(services, 5_000, 25_000, 500);
    const after = heapAfterGc(gc);
    const grownMb = (after - before) / MB;
    process.stdout.write(`Hazelcast store: heap ${(before / MB).toFixed(1)} MB after 5k names, ${(after / MB).toFixed(1)} MB after 30k (${grownMb.toFixed(1)} MB more)\n`);
    // 25k names at ~140 bytes each used to be ~3.3 MB.
    expect(grownMb).toBeLessThan(1.5);
  });
});
