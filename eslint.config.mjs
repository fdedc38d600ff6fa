// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Rooms (DESIGN.md, "Layout for several capabilities"): core <- store (the backend contract) <- backends/<name> (each
// implements it); core, store <- presence, permits <- elections <- allocation <- tasks; schedules beside them on permits
// and presence <- nest, cli. Only lib/nest imports Nest; only lib/backends/hazelcast imports hazelcast-client, even for
// types (lib/nest and lib/cli name them through its hazelcast-client.types); a capability stands on the contract and never imports a
// backend; a backend imports no capability (its task stores stand on lib/store/tasks, the contract's part for tasks;
// Hazelcast's declaration of a new cluster, lib/backends/hazelcast/permits/hazelcast-new-cluster, takes the permits' entries);
// only lib/backends/postgres imports pg; *.rules.ts files are pure. ESLint keeps only the last options a file matches for a rule, so every
// block below lists all the patterns its files need rather than adding to an earlier block.
// The store contract's own part for tasks (lib/store/tasks) is not the tasks capability: every group of rooms lets it through.
const rooms = (...names) => [...names.flatMap((name) => [`**/${name}/*`, `**/${name}/**`]), ...(names.includes('tasks') ? ['!**/store/tasks/*'] : [])];
const NEST = { group: ['@nestjs/*'], message: 'Only lib/nest imports Nest (DESIGN.md layout).' };
const HAZELCAST = { group: ['hazelcast-client'], message: 'Only lib/backends/hazelcast talks to Hazelcast (DESIGN.md, Backends).' };
const POSTGRES = { group: ['pg', 'pg-*'], message: 'Only lib/backends/postgres talks to PostgreSQL (DESIGN.md, Backends).' };
/** The backend clients, each for the @typescript-eslint rule (type imports too), but the one of `own`. */
const clientPaths = (own, suffix = '') => [
  ...(own === 'hazelcast' ? [] : [{ name: 'hazelcast-client', message: `${HAZELCAST.message}${suffix}` }]),
  ...(own === 'postgres' ? [] : [{ name: 'pg', message: POSTGRES.message }]),
];
const BACKENDS = { group: rooms('backends'), message: 'A capability is written over the store contract (lib/store), never over a backend: the module picks the backend.' };
const SHELL = { group: ['**/nest/*', '**/nest/**', '**/cli/*'], message: 'A capability never imports the Nest layer or the CLI.' };
const PURE_IO = { group: ['@nestjs/*', 'hazelcast-client', 'node:*'], message: 'A *.rules.ts file is pure: no I/O, the clock passed in.' };
const PURE_DEPS = { group: ['**/*.store', '**/*.engine', '**/backends/**', '**/nest/*', '**/nest/**'], message: 'A *.rules.ts file is pure: no stores, engines or Nest.' };
const CAPABILITIES = ['presence', 'permits', 'elections', 'allocation', 'tasks', 'schedules'];

// Each capability and the capabilities it never imports: the ones above it, and for presence and permits each other
// (both stand on core and hazelcast alone; Nest wires the live instances presence sees into the permits' admin).
const LAYERS = [
  { room: 'presence', never: ['permits', 'elections', 'allocation', 'tasks', 'schedules'], why: 'Presence stands on core and hazelcast only: it imports no other capability.' },
  { room: 'permits', never: ['presence', 'elections', 'allocation', 'tasks', 'schedules'], why: 'Permits stand on core and hazelcast only: they import no other capability.' },
  { room: 'elections', never: ['allocation', 'tasks', 'schedules'], why: 'Elections are built on permits and presence: they never import allocation, tasks or schedules.' },
  { room: 'allocation', never: ['tasks', 'schedules'], why: 'Allocation is built on permits and presence (and elections): it never imports tasks or schedules.' },
  { room: 'tasks', never: ['schedules'], why: 'Tasks never import schedules: schedules are built on permits and presence beside them.' },
  { room: 'schedules', never: ['elections', 'allocation', 'tasks'], why: 'Schedules are built on permits and presence: they never import elections, allocation or tasks.' },
];

// Inside lib/nest, one folder per capability mirrors the rooms below it: each adapts its own capability and those it
// is built on, never one above it, never the admin API, and never the module that assembles them all. Observability
// reads every capability and is read by them (events, tracing), so it has no rule here; the module, its definition and
// its lifecycle stand above every folder. The module options (lib/nest/options: what users write, and its resolution)
// and the explorer stand below every folder: each folder reads them, and they read none (NEST_LEAVES).
const NEST_ROOT = ['**/gatekeeper.module', '**/gatekeeper.lifecycle', '**/gatekeeper.module-definition'];
const NEST_LAYERS = [
  { room: 'schedule-metadata', never: ['permits', 'presence', 'elections', 'allocation', 'tasks', 'schedules', 'admin', 'observability'] },
  { room: 'presence', never: ['permits', 'elections', 'allocation', 'tasks', 'schedules', 'admin'] },
  { room: 'permits', never: ['elections', 'allocation', 'tasks', 'schedules', 'admin'] },
  { room: 'elections', never: ['allocation', 'tasks', 'schedules', 'admin'] },
  { room: 'allocation', never: ['elections', 'tasks', 'schedules', 'admin'] },
  { room: 'tasks', never: ['elections', 'allocation', 'schedules', 'admin'] },
  { room: 'schedules', never: ['elections', 'allocation', 'tasks', 'admin'] },
];

/** Files of lib/nest that every folder reads and that read no file of lib/nest outside their own folder. */
const NEST_LEAVES = [
  {
    files: ['lib/nest/options/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [
      { regex: '^\\.\\./(?!\\.\\./)', message: 'The module options are a leaf of the Nest layer: they import nothing of lib/nest outside lib/nest/options.' },
    ] }] },
  },
  {
    files: ['lib/nest/gatekeeper.explorer.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [
      { regex: '^\\./[^/]+/', message: 'The explorer knows no capability: the capability that reads a decorator asks it for its metadata key.' },
    ] }] },
  },
];

/** A Nest capability folder: the capabilities it never adapts (in lib/ or in lib/nest) and the module's root. */
function nestRules({ room, never }) {
  return {
    files: [`lib/nest/${room}/**/*.ts`],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: rooms(...never), message: `lib/nest/${room} adapts its own capability and those below it (DESIGN.md layout).` },
        { group: NEST_ROOT, message: 'A capability folder never imports the module, its definition or its lifecycle: they assemble the folders.' },
      ] }],
    },
  };
}

/** A capability's two kinds of file: ordinary (over the store contract, no backend) and *.rules.ts (pure). */
function capabilityRules({ room, never, why }) {
  const layer = never.length > 0 ? [{ group: rooms(...never), message: why }] : [];
  const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns: [...patterns, ...layer] }] });
  return [
    { files: [`lib/${room}/**/*.ts`], ignores: [`lib/${room}/**/*.rules.ts`], rules: restrict([NEST, HAZELCAST, POSTGRES, BACKENDS, SHELL]) },
    { files: [`lib/${room}/**/*.rules.ts`], rules: restrict([PURE_IO, PURE_DEPS, BACKENDS, SHELL]) },
  ];
}

export default tseslint.config(
  // The docs site's build output, cache and generated API reference (npm run docs:build) are not sources.
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', 'coverage/**', 'bench/results/**', 'docs/.vitepress/dist/**', 'docs/.vitepress/cache/**', 'docs/public/api/**', 'temp/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.object.name=/^(it|describe|test)$/][callee.property.name=/^(only|skip)$/]", message: 'No focused or skipped tests.' },
        { selector: "CallExpression[callee.name=/^(xit|xdescribe|fit|fdescribe)$/]", message: 'No focused or skipped tests.' },
      ],
    },
  },
  // CommonJS files (preloads such as scripts/ts-register.cjs) load their modules with require().
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  // The web console (lib/console) runs in the browser (its type check knows the DOM and no Node global). It bundles only
  // its own files and takes nothing but types from the rest of lib/ (the admin API's answers): no Node code reaches it.
  {
    files: ['lib/console/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [
        { regex: '^(?!\\.{1,2}/)', message: 'The web console bundles only its own files: no package, no Node module.' },
        { regex: '^\\.\\./', allowTypeImports: true, message: 'The web console takes only types from the rest of lib/ (the admin API\'s answers): the code there is Node\'s.' },
      ] }],
    },
  },
  { files: ['lib/**/*.rules.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [PURE_IO, PURE_DEPS] }] } },
  {
    files: ['lib/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@nestjs/*', 'hazelcast-client', 'pg', 'ioredis'], message: 'lib/core has no I/O and no framework (DESIGN.md layout).' },
        { group: [...rooms('store', 'backends', ...CAPABILITIES), '**/nest/*', '**/nest/**', '**/cli/*'], message: 'lib/core imports nothing above it.' },
      ] }],
    },
  },
  {
    // The backend contract names what the primitives promise, never how a store keeps it.
    files: ['lib/store/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@nestjs/*', 'hazelcast-client', 'pg', 'ioredis'], message: 'lib/store is the contract: no framework and no backend client (DESIGN.md, Backends).' },
        { group: [...rooms('backends', ...CAPABILITIES), '!./tasks/*', '**/nest/*', '**/nest/**', '**/cli/*'], message: 'lib/store stands on core only (its part for tasks, lib/store/tasks, is its own).' },
      ] }],
    },
  },
  {
    // A backend implements the store contract (lib/store, its task stores lib/store/tasks): it imports no capability,
    // so a capability's store is written once over the contract, and a third party's backend needs nothing else.
    // What a capability must tell a backend (how to judge its records when a store is declared new) comes through
    // the contract (lib/store/new-store-rules).
    files: ['lib/backends/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        NEST,
        { group: [...rooms(...CAPABILITIES), '!./tasks/*', '**/nest/*', '**/nest/**', '**/cli/*'], message: 'A backend implements the store contract (lib/store); it imports no capability.' },
      ] }],
    },
  },
  {
    // Only the Hazelcast backend talks to Hazelcast, only the PostgreSQL backend to PostgreSQL: native paths too.
    files: ['lib/backends/**/*.ts'],
    ignores: ['lib/backends/hazelcast/**', 'lib/backends/postgres/**'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: clientPaths(undefined) }] },
  },
  { files: ['lib/backends/hazelcast/**/*.ts'], rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: clientPaths('hazelcast') }] } },
  { files: ['lib/backends/postgres/**/*.ts'], rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: clientPaths('postgres') }] } },
  {
    // The public contract suites build the capabilities' stores over any backend: never the Nest layer, the CLI or a backend.
    files: ['lib/testing/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        NEST,
        { group: ['**/nest/*', '**/nest/**', '**/cli/*', ...rooms('backends')], message: 'lib/testing runs the contract over any backend: it imports no backend, Nest layer or CLI.' },
      ] }],
    },
  },
  ...LAYERS.flatMap(capabilityRules),
  // Fenced writes (lib/fencing) are the resource's side, in the user's database: they stand on core (and the store
  // contract, for the fences of HTTP routes), and each executor loads its tool (an optional peer) only when called
  // (executors/peer.ts), never by an import.
  {
    files: ['lib/fencing/**/*.ts'],
    ignores: ['lib/fencing/**/*.rules.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [NEST, HAZELCAST, POSTGRES, BACKENDS, SHELL,
        { group: rooms(...CAPABILITIES), message: 'Fenced writes take any lease by its shape, not by importing a capability.' },
        { group: ['mysql2', 'mysql2/*', 'typeorm', 'knex', 'kysely', 'drizzle-orm', 'drizzle-orm/*', '@prisma/*', '@mikro-orm/*'], message: 'An executor loads its tool when called (executors/peer.ts), never by an import: the tools are optional peers.' },
      ] }],
    },
  },
  ...NEST_LAYERS.map(nestRules),
  ...NEST_LEAVES,
  {
    files: ['lib/nest/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: clientPaths(undefined, ' Name its types through lib/backends/hazelcast/hazelcast-client.types.') }],
    },
  },
  {
    files: ['lib/cli/**/*.ts', 'lib/testing.ts', 'lib/testing/**/*.ts', 'lib/index.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: clientPaths(undefined, ' Name its types through lib/backends/hazelcast/hazelcast-client.types.') }],
    },
  },
);
