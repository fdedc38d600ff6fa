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
  {
    files: ['lib/gatekeeper/**/*.ts', 'lib/store/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@nestjs/*'], message: 'Rules and stores stay free of Nest (DESIGN.md layers).' }] }],
    },
  },
  {
    files: ['lib/gatekeeper/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@nestjs/*', 'hazelcast-client', '../store/*', '../nest/*'], message: 'The gatekeeper rules are pure: no Nest, no store, no Hazelcast.' }] }],
    },
  },
  {
    files: ['lib/nest/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ name: 'hazelcast-client', allowTypeImports: true, message: 'Only the store talks to Hazelcast.' }] }],
    },
  },
);
