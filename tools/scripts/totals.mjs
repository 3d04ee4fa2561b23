#!/usr/bin/env node
// Prints jest's real totals, from its --json output, as one line: "N passed, N failed".
import { readFileSync, existsSync } from 'node:fs';

const file = process.argv[2];
if (!file || !existsSync(file)) {
  console.error(`No jest results at ${file ?? '(no path given)'}: jest did not finish.`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const r = JSON.parse(readFileSync(file, 'utf8'));
// A suite that fails to load counts as a failure even though it ran no test.
const brokenSuites = (r.testResults ?? []).filter(
  (s) => s.status === 'failed' && (s.assertionResults ?? []).length === 0,
).length;
const failed = r.numFailedTests + brokenSuites;
const skipped = r.numPendingTests + (r.numTodoTests ?? 0);
console.log(`${r.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || r.numTotalTests === 0 || !r.success ? 1 : 0);
