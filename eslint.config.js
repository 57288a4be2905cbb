// ESLint for the project's own files: typescript-eslint's strict rules with type information
// (each file's TypeScript project is found for it: tsconfig.json, or hub/web/tsconfig.json for
// the page's JavaScript), and no promise left floating. Run with `npm run lint`.

import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.tmp/', 'test-output/', '.cache/'] },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // noUncheckedIndexedAccess types every index as possibly undefined; `!` after a length or key check is the idiom here.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Numbers and booleans print as they should in messages and tmux arguments.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `(x) => void f(x)` shorthand for callbacks is deliberate and reads better than a block.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
    },
  },
  {
    // The page runs in a browser; TypeScript (checkJs) already knows its globals.
    files: ['hub/web/**/*.js'],
    rules: { 'no-undef': 'off' },
  },
  {
    // The page's DOM wiring is not in hub/web/tsconfig.json yet (no JSDoc types): linted without types until it is.
    files: ['hub/web/page.js', 'hub/web/view.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // Plain scripts outside any TypeScript project (tools, the CommonJS entry, the agents'
    // bridges, test loader hooks): no type information to lint them with.
    files: ['**/*.mjs', 'bin/**/*.js', 'bridges/**/*.js', 'eslint.config.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['bin/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
