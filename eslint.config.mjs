// Lint rules for the whole repository, run by `npm run lint` (part of `npm test`, so CI enforces them).
// Type-aware typescript-eslint rules catch what reads fine but breaks: floating or misused promises, unsafe `any` flows.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  {
    ignores: ["node_modules/", "**/node_modules/", "dist/", "coverage/", ".bench-out/", ".bench-build/", ".test-output/", ".api-report/", "api/", "examples/"],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // Each TypeScript file is checked with the tsconfig.json nearest to it (the root one, or the Vitest projects' own).
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // A leading underscore marks a parameter kept for its position in a callback signature.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      // The matcher typings augment Jest's and Vitest's interfaces by declaration merging: `interface Matchers<R>
      // extends SessionParityMatchers<R> {}` is the only way to add members there, so empty extending interfaces stay.
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      // Off: an `async` function without `await` is how this code implements a Promise-returning interface (plan sinks,
      // test stubs of servers and clients) so that a synchronous throw reaches the caller as a rejection; dropping
      // `async` to please the rule would turn those rejections back into throws.
      "@typescript-eslint/require-await": "off",
      // Off: every hit was String() on an `unknown` JSON value already narrowed away from objects at run time (Python
      // repr of scalars, error messages naming a rejected value); TypeScript types such a value as `{}`, so the rule
      // cannot tell a scalar from an object and would demand casts that say nothing.
      "@typescript-eslint/no-base-to-string": "off",
    },
  },
  {
    // Off in tests only: the tests read JSON bodies of real HTTP replies (`Record<string, any>`) and check them with
    // `expect`, whose asymmetric matchers (`expect.objectContaining(...)`) are themselves typed `any`; a wrong property
    // path fails the test at once, so an `any` flowing into an assertion cannot hide a bug there. The rules that matter
    // in tests (floating and misused promises, unused code) stay on.
    files: ["__tests__/**"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
    },
  },
  {
    // Plain CommonJS files (the Jest preset users load without a build, the repository scripts) are outside the
    // TypeScript project: they are linted with the untyped rules only.
    files: ["**/*.js", "**/*.cjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: "commonjs", globals: globals.node },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
);
