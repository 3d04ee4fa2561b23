/** Runs every package's tests from the root in one command. */
module.exports = {
  projects: ['<rootDir>/packages/*', '<rootDir>/apps/*'],
};
