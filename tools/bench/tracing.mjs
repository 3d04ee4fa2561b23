#!/usr/bin/env node
// The cost of `tracing: true` with the no-op tracer of @opentelemetry/api (the API
// installed, no SDK registered) against `tracing: false`, for WS echo and HTTP GET /json.
// The same @pkg/core bench server (servers/pkg.ts, built) runs with each setting, in turns
// (off, on, off, on, ...) so that drift of a shared machine falls on both alike. Reported:
// the server's CPU time per operation (µs, the figure to read on a shared machine) and
// operations/s, as medians of BENCH_ROUNDS rounds, and on/off ratios.
//
//   node tools/bench/tracing.mjs            # 3 rounds of 3 s per workload and setting (~1 min)
//   BENCH_ROUNDS=5 BENCH_SECONDS=5 node tools/bench/tracing.mjs
import { measureEcho, measureGet } from './lib/measure.mjs';
import { setUpPinning, startServer, usePinning } from './lib/proc.mjs';
import { THROUGHPUT_PKG_CONFIG } from './lib/limits.mjs';
import { median } from './lib/stats.mjs';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);

const settings = { off: { tracing: false }, on: { tracing: true } };
const workloads = {
  'ws-echo': (server) => measureEcho('ws', server, { clients: 50, seconds }),
  'http-get': (server) => measureGet(server, { connections: 50, seconds }),
};

const pinning = setUpPinning();
usePinning(pinning);
process.stderr.write(`pinning: ${pinning.text}\n`);
const results = {};
for (const [name, run] of Object.entries(workloads)) {
  results[name] = { off: [], on: [] };
  for (let r = 0; r < rounds; r++) {
    for (const [setting, config] of Object.entries(settings)) {
      const server = await startServer('pkg', {
        pkgConfig: { ...THROUGHPUT_PKG_CONFIG, ...config },
      });
      try {
        // A short warm-up so that both settings are measured with optimised code.
        await run(server).catch(() => undefined);
        results[name][setting].push(await run(server));
      } finally {
        await server.stop();
      }
      process.stderr.write(`${name} ${setting} round ${r + 1}/${rounds} done\n`);
    }
  }
}

const fmt = (n, d = 1) => n.toFixed(d);
const lines = [
  `Pinning: ${pinning.text}.`,
  '',
  `Tracing cost: ${rounds} rounds of ${seconds} s per workload and setting; medians. Server CPU per operation is the figure to read on a shared machine.`,
  '',
  '| workload | setting | ops/s | server CPU µs/op | CPU on/off | ops/s on/off |',
  '| -------- | ------- | ----- | ---------------- | ---------- | ------------ |',
];
for (const [name, r] of Object.entries(results)) {
  const off = { rate: median(r.off.map((x) => x.rate)), cpu: median(r.off.map((x) => x.cpu)) };
  const on = { rate: median(r.on.map((x) => x.rate)), cpu: median(r.on.map((x) => x.cpu)) };
  lines.push(`| ${name} | tracing off | ${fmt(off.rate, 0)} | ${fmt(off.cpu)} | | |`);
  lines.push(
    `| ${name} | tracing on (no-op tracer) | ${fmt(on.rate, 0)} | ${fmt(on.cpu)} | ${fmt(on.cpu / off.cpu, 3)} | ${fmt(on.rate / off.rate, 3)} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
