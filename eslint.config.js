// ESLint for the project's own files: typescript-eslint's strict rules with type information
// (each file's TypeScript project is found for it: tsconfig.json, or hub/web/tsconfig.json for
// the page's JavaScript), and no promise left floating. Run with `npm run lint`.

import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Every disable comment must silence something, or it goes.
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
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
      // `(x) => f(x)` callbacks and `return done(x)` in a void function are deliberate shorthand.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true, ignoreVoidReturningFunctions: true }],
      // String + number concatenation builds messages and keys on purpose.
      '@typescript-eslint/restrict-plus-operands': ['error', { allowNumberAndString: true }],
      // A leading `_` marks a value taken apart only to leave it out.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // State re-read after an await or a callback (stopped, closed, a timer) looks constant to
      // TypeScript, and input from outside is checked whatever its declared type: the checks stay.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // For the same reason `x === true` stays exact: isTTY is undefined off a terminal, and a row's flag may not be a boolean.
      '@typescript-eslint/no-unnecessary-boolean-literal-compare': 'off',
      // Removing `async` from a function without await would turn its rejections into synchronous throws.
      '@typescript-eslint/require-await': 'off',
      // `[...text]` walks a string by code point on purpose (screens hold emoji and wide glyphs).
      '@typescript-eslint/no-misused-spread': 'off',
      // String(x) is how a value of unknown shape from outside (a log field, a socket chunk) is printed.
      '@typescript-eslint/no-base-to-string': 'off',
      // Control characters are what these patterns look for: ANSI escapes, bytes a name may not hold.
      'no-control-regex': 'off',
      // A type parameter naming what a parsed body or frame holds is the caller's declaration of it.
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
      // Option and header records are keyed by names known only at run time.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // The act broker unwinds a finished attempt with a Finished value, not an error.
      '@typescript-eslint/only-throw-error': ['error', { allow: [{ from: 'file', name: 'Finished' }] }],
    },
  },
  {
    // Tests assert on parsed JSON and on page objects as they come (any): a wrong shape fails the assertion itself.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Fakes stand in for class instances (a runner, a socket) with only the members a test uses.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
    },
  },
  {
    // doctor's report is a loose JSON document by design (its Doc type is a record of any).
    files: ['cli/verbs/doctor.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The page runs in a browser; TypeScript (checkJs) already knows its globals. Its rows are the
    // hub's JSON as received, whatever the JSDoc says: String(x) keeps a field that is not a string
    // from reaching the screen as something else.
    files: ['hub/web/**/*.js'],
    rules: { 'no-undef': 'off', '@typescript-eslint/no-unnecessary-type-conversion': 'off' },
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
