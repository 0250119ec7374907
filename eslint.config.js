// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Layers that must stay pure (goodput/, core/, model/, policy/, planner/): no Node APIs, no drivers. */
const pureLayerRestrictions = {
  patterns: [
    {
      group: ['node:*', 'fs', 'path', 'os', 'child_process', 'worker_threads'],
      message: 'goodput/, core/ and policy/ are pure: no I/O or Node APIs.',
    },
    {
      group: [
        '**/sim/**',
        '**/control/**',
        '**/cli/**',
        '**/store/**',
        '**/api/**',
        '**/doctor/**',
        '**/backends/**',
        '**/client/**',
        '**/server/**',
        '**/util/**',
      ],
      message: 'goodput/, core/ and policy/ must not depend on drivers.',
    },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'python/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    files: [
      'src/goodput/**/*.ts',
      'src/policy/**/*.ts',
      'src/core/**/*.ts',
      'src/model/**/*.ts',
      'src/planner/**/*.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', pureLayerRestrictions] },
  },
  {
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
