// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.cache/', 'tools/bench/results/'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Tool files in CommonJS (.mocharc.cjs; the mocha reporter, which mocha loads with require()).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', process: 'readonly', require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'no-console': 'error',
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node APIs, no database or Kafka
    // clients, no activity implementations (their types only).
    files: ['workflows/**/*.ts', 'test/fixtures/*workflow*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'pg', message: 'workflows must not touch PostgreSQL; call an activity' },
            { name: 'kafkajs', message: 'workflows must not touch Kafka; call an activity' },
            { name: '@temporalio/worker', message: 'worker code does not belong in a workflow' },
            { name: '@temporalio/activity', message: 'activity code does not belong in a workflow' },
          ],
          patterns: [
            { group: ['node:*', 'fs', 'path', 'net', 'http', 'https', 'child_process', 'crypto', 'os'], message: 'Node modules are not available in workflow code' },
            { group: ['**/activities', '**/activities/*', '**/*-activities', '**/db/*', '**/local-stack/*', '**/config/env'], allowTypeImports: true, message: 'workflows import only the types of activities and no I/O modules' },
          ],
        },
      ],
    },
  },
  {
    // CLI commands, infra and benchmarks talk to a terminal.
    files: ['src/cli/**/*.ts', 'tools/**/*.ts', 'examples/**/demo/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
