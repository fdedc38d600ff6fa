/**
 * The few functions of a test runner a contract suite needs: Jest's globals and `node:test` both have them. Pass
 * `import * as test from 'node:test'` to run a suite under Node's own runner; under Jest the globals are used.
 */
export interface TestApi {
  /** Groups tests. */
  describe(name: string, body: () => void): void;
  /** One test; `timeoutMs` is Jest's (node:test leaves it alone). */
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
  /** Runs before each test of the group. */
  beforeEach(body: () => Promise<void>): void;
  /** Runs after each test of the group. */
  afterEach(body: () => Promise<void>): void;
}

/** The runner's functions: the ones given, else the globals (Jest, Vitest with globals). */
export function testApi(given?: Partial<TestApi>): TestApi {
  const globals = globalThis as unknown as Partial<TestApi>;
  const pick = <K extends keyof TestApi>(key: K): TestApi[K] => {
    const fn = given?.[key] ?? globals[key];
    if (typeof fn !== 'function') throw new Error(`contract suite: no '${key}' function; pass the runner's (e.g. import * as test from 'node:test')`);
    return fn as TestApi[K];
  };
  // node:test reads (name, fn) and leaves a third argument alone: the timeout is Jest's.
  return { describe: pick('describe'), it: pick('it'), beforeEach: pick('beforeEach'), afterEach: pick('afterEach') };
}

/** Options of the contract suites: {@link describeStoreContracts}, {@link describeBackendContract} and each capability's suite. */
export interface ContractOptions {
  /** The test runner's functions; default: the globals (Jest). Pass `import * as test from 'node:test'` for Node's runner. */
  readonly test?: Partial<TestApi>;
  /** How long a test may take, in ms (Jest's timeout; node:test has none). Default 30 s. */
  readonly timeoutMs?: number;
  /** How long an event (or a change another node made) may take to be heard, in ms. Default 10 s. */
  readonly eventTimeoutMs?: number;
}

/** What a capability suite's fixture gives: two stores (two nodes) and the fixture's own close. */
export interface StoresFixture<S> {
  readonly stores: readonly [S, S];
  close(): Promise<void>;
}

/**
 * A fresh fixture for every test of the group: made by `setup` and its stores connected (by `connect`, plain
 * `connect()` by default) before each test, closed after it, then the fixture itself. Returns the current fixture.
 */
export function fixtureEachTest<S extends { connect(): Promise<unknown>; close(): Promise<void> }, F extends StoresFixture<S>>(
  api: Pick<TestApi, 'beforeEach' | 'afterEach'>,
  setup: () => Promise<F>,
): () => F {
  let fixture: F | undefined;
  api.beforeEach(async () => {
    fixture = await setup();
    await Promise.all(fixture.stores.map((s) => s.connect()));
  });
  api.afterEach(async () => {
    await Promise.all(fixture?.stores.map((s) => s.close()) ?? []);
    await fixture?.close();
  });
  return () => {
    if (!fixture) throw new Error('contract suite: no fixture outside a test');
    return fixture;
  };
}
