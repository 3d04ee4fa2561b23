// The fast unit tests of the connection code (no server, no sockets), for mutation runs:
// `pnpm run mutate:core` (see stryker.config.json beside this file). Stryker runs this file
// from a copy of the package, so the workspace root is found by walking up.
const fs = require('node:fs');
const path = require('node:path');

let root = __dirname;
while (!fs.existsSync(path.join(root, 'pnpm-workspace.yaml'))) root = path.dirname(root);

module.exports = {
  ...require(path.join(root, 'tools/jest/preset.cjs'))(__dirname),
  testMatch: ['<rootDir>/src/protocol/**/*.test.ts'],
  // The preset leaves out `.stryker-tmp`, where this runs.
  modulePathIgnorePatterns: [],
};
