/**
 * Jest runs the lab extension's pure modules (no JupyterLab, no DOM) from
 * their TypeScript sources.
 */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  testRegex: 'test/.*\\.spec\\.ts$',
  moduleNameMapper: {
    // The sources import their siblings as `./name.js`, as the browser loads them.
    '^(\\.{1,2}/.*)\\.js$': '$1'
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }]
  }
};
