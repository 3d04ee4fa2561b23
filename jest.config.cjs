/** Runs every package's tests from the root in one command. */
module.exports = {
  projects: [
    '<rootDir>/packages/*',
    '<rootDir>/apps/*',
    '<rootDir>/tools/pack',
    '<rootDir>/tools/bench',
  ],
  // A global option: the per-project presets cannot set it when run through `projects`.
  testTimeout: 20000,
};
