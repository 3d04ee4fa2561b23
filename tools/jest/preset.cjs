// Shared jest preset: ts-jest compiles TypeScript to CommonJS without type-checking
// (`tsc` does that in `typecheck`), and sibling @pkg/* imports resolve to their sources,
// so tests never wait for a build.
const path = require('node:path');

const root = path.resolve(__dirname, '../..');

/** @param {string} dir the package directory */
module.exports = function preset(dir) {
  return {
    displayName: path.relative(root, dir),
    rootDir: dir,
    testEnvironment: 'node',
    testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
    moduleFileExtensions: ['ts', 'js', 'cjs', 'mjs', 'json'],
    transform: {
      '^.+\\.ts$': [
        require.resolve('ts-jest'),
        {
          tsconfig: {
            target: 'ES2022',
            module: 'commonjs',
            moduleResolution: 'node10',
            verbatimModuleSyntax: false,
            isolatedModules: true,
            esModuleInterop: true,
            lib: ['ES2023', 'ESNext.Decorators', 'DOM'],
            sourceMap: true,
          },
        },
      ],
    },
    moduleNameMapper: {
      '^@pkg/(core|ws-protocol|http|logger|decorators|redis-adapter|client|wire|admin)$': `${root}/packages/$1/src/index.ts`,
    },
    // A mutation run's copy of a package (`pnpm run mutate:core`) is not a second package.
    modulePathIgnorePatterns: ['/\\.stryker-tmp/'],
    testTimeout: 20000,
  };
};
