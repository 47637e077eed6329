// ESLint (flat config): typescript-eslint's recommended rules with type information, promise
// discipline (a floating promise in a worker or an activity is a lost error), and the workflow
// sandbox's boundary (workflow code imports no Node API and no activity implementation).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.temporal/', '.mlflow/', 'demo-output/', 'coverage/', 'dist/', 'bench/out/'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'os', 'child_process', 'undici'],
              message: 'workflow code is deterministic: no I/O, no Node APIs',
            },
            {
              group: ['../activities/*', '!../activities/index.js'],
              message: 'workflows import activity types only (through activities/index.js)',
            },
          ],
        },
      ],
    },
  },
  {
    // src/ (the command, the libraries) sits under activities/ and workflows/: it reaches the workflow
    // through its client API only, and the activities only through the worker module (below).
    files: ['src/**/*.ts'],
    ignores: ['src/contract/**', 'src/temporal/worker.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/activities/**'],
              message: 'src/ does not import activities/: move the rule into src/ (a worker reaches them through src/temporal/worker.ts)',
            },
            {
              group: ['**/workflows/**', '!**/workflows/definitions.js', '!**/workflows/plan-request.js'],
              allowTypeImports: true,
              message:
                'src/ imports of workflows/ only definitions.js (the client API: task queue, queries, updates), plan-request.js (the plan request the plan made ahead must equal) and types',
            },
          ],
        },
      ],
    },
  },
  {
    // The contract layer (NeMo Gym's names, shapes, messages) is the bottom: it imports nothing above it.
    files: ['src/contract/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*/**', '!../contract/**'],
              message: 'src/contract imports only src/contract (and node/npm packages): it is the bottom layer',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests and benchmarks read parsed JSON rows (`any`) by design: the no-unsafe-* family would
    // ask for a cast on every assertion. Promise rules still apply.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      // Async generators stand in for streams in tests.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // A server whose script refers to the server itself is declared before it is assigned.
      'prefer-const': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
