/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/lib', '<rootDir>/examples'],
  testMatch: ['**/*.spec.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleNameMapper: { '^nestjs-gatekeeper$': '<rootDir>/lib/index.ts', '^nestjs-gatekeeper/testing$': '<rootDir>/lib/testing.ts', '^nestjs-gatekeeper/fencing$': '<rootDir>/lib/fencing.ts' },
  globalSetup: '<rootDir>/test/setup/global-setup.mjs',
  globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
  reporters: ['default', '<rootDir>/test/setup/summary-reporter.js'],
  testTimeout: 120_000,
  // Four workers on two cores: most tests wait on leases, timers and the processes they start (a fault file uses about
  // a fifth of a core), so four keep the cores busy. Jest 432 s with 4 against 690 s with 2, every test green.
  maxWorkers: 4,
  // A worker whose heap grew past this after a test file is replaced: about 140 suites in, one ran out of memory on CI
  // (again at 1 GB, on test/faults/dropped-write-lost-edit.spec.ts).
  workerIdleMemoryLimit: '512MB',
};
