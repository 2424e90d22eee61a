// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.kbsync/**', '.bench-build/**', '.eval-build/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        { selector: 'TSEnumDeclaration', message: 'use a string-literal union, not an enum' },
        {
          // `z` is a namespace object holding all of zod, its 50 locales included: bundled, that is 560 KB more
          // for every command to load. Static uses of `import * as z` let the bundler keep only what is used.
          selector: "ImportDeclaration[source.value='zod'][importKind='value'] > ImportSpecifier[imported.name='z']",
          message: "import * as z from 'zod' (the named z export drags all of zod's locales into the bundle)",
        },
      ],
    },
  },
  {
    // A module past 400 lines holds more than one subject: split it by subject (docs/development.md).
    files: ['src/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.js'],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    // Dependency rules of docs/architecture.md, checked by the linter. The sync side, and the daemon
    // that drives its cycles, never reach into the service or the CLI.
    files: ['src/sync/**/*.ts', 'src/watch/**/*.ts'],
    ignores: ['src/sync/state/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: ['**/service/**', '**/cli/**'],
          paths: [
            { name: 'better-sqlite3', message: 'only src/sync/state/ opens SQLite on the sync side' },
            { name: 'undici', message: 'only src/client/ makes HTTP calls on the sync side' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/sync/state/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: ['**/service/**', '**/cli/**'],
          paths: [{ name: 'undici', message: 'only src/client/ makes HTTP calls on the sync side' }],
        },
      ],
    },
  },
  {
    // The two stores mirror each other table by table and share only the store-neutral modules of state/.
    files: ['src/sync/state/pg/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/service/**', '**/cli/**'], message: 'the sync side never reaches into the service or the CLI' },
            { group: ['**/sqlite/**'], message: 'the PostgreSQL state shares only the store-neutral modules of state/' },
          ],
          paths: [
            { name: 'undici', message: 'only src/client/ makes HTTP calls on the sync side' },
            { name: 'better-sqlite3', message: 'the PostgreSQL state does not open SQLite' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/sync/state/sqlite/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/service/**', '**/cli/**'], message: 'the sync side never reaches into the service or the CLI' },
            { group: ['**/pg/**'], message: 'the SQLite state shares only the store-neutral modules of state/' },
          ],
          paths: [
            { name: 'undici', message: 'only src/client/ makes HTTP calls on the sync side' },
            { name: 'pg', message: 'the SQLite state does not open PostgreSQL' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/service/**/*.ts'],
    ignores: ['src/service/store/**', 'src/service/**/*.test.ts', 'src/service/**/test-support.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: ['**/sync/**', '**/cli/**', '**/client/**'],
          paths: [
            { name: 'better-sqlite3', importNames: ['default'], message: 'only src/service/store/ opens SQLite (type imports are fine)' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/service/store/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/sync/**', '**/cli/**', '**/client/**'] }] },
  },
  {
    files: ['src/sync/planner/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          // Pure: data in, plan out. It reads the tracked files through sync/tracked/, never a store or a walk.
          patterns: ['**/service/**', '**/cli/**', '**/state/**', '**/client/**', '**/sources/**', '**/executor/**', '**/watch/**'],
          paths: ['better-sqlite3', 'undici', 'node:fs', 'node:fs/promises', 'fs'],
        },
      ],
    },
  },
  {
    // The tracked files' schema, rows and index: below the state, the planner and the sources, which all use it.
    files: ['src/sync/tracked/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            '**/service/**',
            '**/cli/**',
            '**/state/**',
            '**/client/**',
            '**/sources/**',
            '**/planner/**',
            '**/executor/**',
            '**/watch/**',
          ],
          paths: ['better-sqlite3', 'undici'],
        },
      ],
    },
  },
  {
    // The converters are pure (bytes in, Markdown out): they reach neither the service, the sync side, the CLI nor the daemon.
    files: ['src/convert/**/*.ts'],
    ignores: ['src/convert/**/*.test.ts', 'src/convert/**/*.test-util.ts', 'src/convert/convert-file.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['**/service/**', '**/sync/**', '**/cli/**', '**/watch/**'], paths: ['node:fs', 'node:fs/promises', 'fs', 'undici'] },
      ],
    },
  },
  {
    // Their tests read fixture files, and the conversion thread's door reads the one file it is asked to convert.
    files: ['src/convert/**/*.test.ts', 'src/convert/**/*.test-util.ts', 'src/convert/convert-file.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/service/**', '**/sync/**', '**/cli/**', '**/watch/**'] }] },
  },
  {
    files: ['src/client/**/*.ts', 'src/config/**/*.ts', 'src/shared/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/service/**', '**/sync/**', '**/cli/**'] }] },
  },
);
