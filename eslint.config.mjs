// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', 'coverage/**', 'bench/results/**'] },
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
  // The web console's script runs in the browser, not in Node.
  { files: ['lib/nest/admin/console/*.js'], languageOptions: { globals: { ...globals.browser }, sourceType: 'script' } },
  // Rooms (DESIGN.md, "Layout for several capabilities"): core <- hazelcast <- permits <- nest; only lib/nest imports
  // Nest; only lib/hazelcast and files named hazelcast-* import hazelcast-client; *.rules.ts files are pure.
  {
    files: ['lib/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@nestjs/*', 'hazelcast-client'], message: 'lib/core has no I/O and no framework (DESIGN.md layout).' },
        { group: ['**/hazelcast/*', '**/permits/*', '**/permits/**', '**/nest/*', '**/nest/**', '**/cli/*'], message: 'lib/core imports nothing above it.' },
      ] }],
    },
  },
  {
    files: ['lib/hazelcast/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@nestjs/*'], message: 'Only lib/nest imports Nest (DESIGN.md layout).' },
        { group: ['**/permits/*', '**/permits/**', '**/nest/*', '**/nest/**', '**/cli/*'], message: 'lib/hazelcast serves the capabilities; it imports none of them.' },
      ] }],
    },
  },
  {
    files: ['lib/permits/**/*.ts', 'lib/membership/**/*.ts', 'lib/allocation/**/*.ts', 'lib/tasks/**/*.ts'],
    ignores: ['lib/permits/**/hazelcast-*.ts', 'lib/membership/**/hazelcast-*.ts', 'lib/allocation/**/hazelcast-*.ts', 'lib/tasks/**/hazelcast-*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@nestjs/*'], message: 'Only lib/nest imports Nest (DESIGN.md layout).' },
        { group: ['hazelcast-client'], message: 'Only lib/hazelcast and files named hazelcast-* talk to Hazelcast.' },
        { group: ['**/nest/*', '**/nest/**', '**/cli/*'], message: 'A capability never imports the Nest layer or the CLI.' },
      ] }],
    },
  },
  // Capabilities build on the ones below them only: permits <- membership <- allocation.
  {
    files: ['lib/permits/**/*.ts'],
    ignores: ['lib/permits/**/hazelcast-*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@nestjs/*'], message: 'Only lib/nest imports Nest (DESIGN.md layout).' },
        { group: ['hazelcast-client'], message: 'Only lib/hazelcast and files named hazelcast-* talk to Hazelcast.' },
        { group: ['**/nest/*', '**/nest/**', '**/cli/*'], message: 'A capability never imports the Nest layer or the CLI.' },
        { group: ['**/membership/*', '**/allocation/*', '**/tasks/*'], message: 'Permits are the bottom capability: they import none above them.' },
      ] }],
    },
  },
  {
    files: ['lib/membership/**/*.ts'],
    ignores: ['lib/membership/**/hazelcast-*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@nestjs/*'], message: 'Only lib/nest imports Nest (DESIGN.md layout).' },
        { group: ['hazelcast-client'], message: 'Only lib/hazelcast and files named hazelcast-* talk to Hazelcast.' },
        { group: ['**/nest/*', '**/nest/**', '**/cli/*'], message: 'A capability never imports the Nest layer or the CLI.' },
        { group: ['**/allocation/*', '**/tasks/*'], message: 'Membership sits below allocation and tasks: it never imports them.' },
      ] }],
    },
  },
  {
    files: ['lib/permits/**/hazelcast-*.ts', 'lib/membership/**/hazelcast-*.ts', 'lib/allocation/**/hazelcast-*.ts', 'lib/tasks/**/hazelcast-*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@nestjs/*'], message: 'Only lib/nest imports Nest (DESIGN.md layout).' },
        { group: ['**/nest/*', '**/nest/**', '**/cli/*'], message: 'A capability never imports the Nest layer or the CLI.' },
      ] }],
    },
  },
  {
    files: ['lib/**/*.rules.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@nestjs/*', 'hazelcast-client', 'node:*'], message: 'A *.rules.ts file is pure: no I/O, the clock passed in.' },
        { group: ['**/*.store', '**/*.engine', '**/hazelcast-*', '**/nest/*', '**/nest/**'], message: 'A *.rules.ts file is pure: no stores, engines or Nest.' },
      ] }],
    },
  },
  {
    files: ['lib/nest/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ name: 'hazelcast-client', allowTypeImports: true, message: 'Only lib/hazelcast and files named hazelcast-* talk to Hazelcast.' }] }],
    },
  },
);
