// One jest run over every workspace: unit and contract suites import TypeScript directly
// (transformed by swc as ES modules); end-to-end suites start the real server process.
/** @type {import('jest').Config} */
export default {
  // Node's environment with its own typed arrays (see the file): what ONNX Runtime needs.
  testEnvironment: "<rootDir>/scripts/jest-environment.js",
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      {
        jsc: { parser: { syntax: "typescript" }, target: "es2022" },
        module: { type: "es6" },
      },
    ],
  },
  testMatch: ["<rootDir>/{apps,packages,services}/*/test/**/*.test.ts"],
  testTimeout: 60000,
  maxWorkers: 2,
  verbose: true,
};
