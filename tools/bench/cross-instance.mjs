#!/usr/bin/env node
// The cross-instance workload (workloads/cross-instance.mjs) alone, through the runner:
// the same as `BENCH_ONLY=cross-instance node run.mjs`; the runner's settings apply.
//   pnpm build && node tools/bench/cross-instance.mjs
process.env.BENCH_ONLY = 'cross-instance';
await import('./run.mjs');
