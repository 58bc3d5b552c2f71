// ESLint (flat config) with typescript-eslint's type-aware rules: `npm run lint`, zero warnings, part of `npm test`.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "test-results/**",
      "infra/**",
      "**/*.js",
      "**/*.mjs",
      "**/*.mts",
      "**/*.cjs",
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: {
      // Each file is checked against the tsconfig.json nearest to it (src/, sim/, local/, devkit/, or the root's).
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A worker that drops a promise loses work silently: every promise is awaited, returned, or `void`ed on purpose.
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
    },
  },
);
