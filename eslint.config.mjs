// ESLint with typescript-eslint (`npm run lint`). The type-aware rules are the point: a Node
// server must not drop a promise (no-floating-promises, no-misused-promises) or await a
// non-promise. Formatting is Prettier's (`npm run format:check`), not a lint rule.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {
    // generated: the napi binding (ts/native) and the codecs from Kafka's schemas (ts/protocol/messages)
    ignores: ['dist/**', 'target/**', 'node_modules/**', 'npm/**', 'ts/native/**', 'ts/protocol/messages/**', '__test__/**', 'tools/**', '*.config.ts', 'data/**', 'bench/.out/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // an empty catch is this codebase's spelling of "best effort" (cleanup, probes)
      'no-empty': ['error', { allowEmptyCatch: true }],
      // Prettier owns the layout and breaks member chains before `[`; with semi: false it guards
      // the real ASI hazards itself (a leading ; on a line that starts with [ or (), so this rule
      // only trips on its output (eslint-config-prettier turns it off for the same reason)
      'no-unexpected-multiline': 'off',
      // a leading _ names what a signature or destructuring must have but the body does not use
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    files: ['ts/**/*.ts', 'bench/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        AbortSignal: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        __dirname: 'readonly',
        module: 'writable',
        require: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        performance: 'readonly',
        queueMicrotask: 'readonly',
        setImmediate: 'readonly',
      },
    },
  },
)
