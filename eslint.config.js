// Type-aware lint: floating promises and non-exhaustive switches are bugs in a service
// that must never lose work, so they are errors, not warnings.
import js from "@eslint/js";
import jest from "eslint-plugin-jest";
import tseslint from "typescript-eslint";

/**
 * What the dashboard's page uses of the browser (services/dashboard/public: native modules,
 * type-checked from their JSDoc by services/dashboard/public/tsconfig.json). Listed by hand: the
 * `globals` package is not a dependency here.
 */
const BROWSER_GLOBALS = Object.fromEntries(
  [
    "window",
    "document",
    "location",
    "navigator",
    "performance",
    "fetch",
    "setTimeout",
    "clearTimeout",
    "URLSearchParams",
    "FormData",
    "XMLHttpRequest",
    "Node",
    "HTMLElement",
    "HTMLDivElement",
    "HTMLDialogElement",
  ].map((name) => [name, "readonly"]),
);

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "data/**",
      "**/*.js",
      "!services/dashboard/public/app.js",
      "!services/dashboard/public/js/*.js",
      "**/*.cjs",
      "**/*.mjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "error",
    },
  },
  {
    // The dashboard's page: plain JavaScript the browser loads as it is (no build step).
    files: ["services/dashboard/public/app.js", "services/dashboard/public/js/*.js"],
    languageOptions: { sourceType: "module", globals: BROWSER_GLOBALS },
  },
  {
    files: ["**/test/**/*.ts", "bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "no-console": "off",
    },
  },
  {
    // A focused test (.only) silently drops every other test of its file: an error. Skips are
    // governed by scripts/allowed-skips.json (`pnpm test` fails on one not listed with its reason).
    files: ["**/test/**/*.ts"],
    plugins: { jest },
    rules: {
      "jest/no-focused-tests": "error",
      "jest/no-disabled-tests": "off",
    },
  },
);
