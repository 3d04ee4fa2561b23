#!/usr/bin/env node
// Side-by-side benchmarks, one module per workload in workloads/ (the contract is in the
// README). Run `pnpm build` first: the library's server is compiled from servers/pkg.ts.
//   pnpm bench
//   BENCH_ONLY=http-get,ws-echo node tools/bench/run.mjs
//   BENCH_QUICK=1 node tools/bench/run.mjs          (one short round of everything)
// Every server runs in its own child process on 127.0.0.1 with port 0, pinned to its own
// core when taskset and two cores are there; the load comes from this process and the
// client processes it starts. Each workload is bounded in time and count.
import { writeFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LABELS, setUpPinning, startServer, usePinning } from './lib/proc.mjs';
import { median } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const quick = process.env.BENCH_QUICK === '1';

function number(name, full, short = full) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return quick ? short : full;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new RangeError(`${name} must be a number >= 0, got "${raw}"`);
  return n;
}

const rounds = number('BENCH_ROUNDS', 3, 1);
const seconds = number('BENCH_SECONDS', 5, 1);
// Seconds of the same load before the clock starts (see the README): a fresh server runs its
// first requests in V8's interpreter while its hot code is compiled, and a server with more
// code takes longer to get there, so without it the figures mix start-up with steady state.
const warmup = number('BENCH_WARMUP', 2, 0.5);

async function loadWorkloads() {
  const dir = path.join(here, 'workloads');
  const all = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.mjs'))
    .sort()) {
    let mod;
    try {
      mod = await import(pathToFileURL(path.join(dir, file)).href);
    } catch (err) {
      // A module that cannot load (say, a package it needs is not built) fails alone.
      const name = file.replace(/\.mjs$/, '');
      all.push({ name, title: name, order: 100, file, run: () => Promise.reject(err) });
      continue;
    }
    for (const w of [mod.default].flat()) {
      if (!w || typeof w.name !== 'string' || typeof w.run !== 'function') {
        throw new TypeError(
          `workloads/${file}: the default export must be {name, title, run} or an array of them`,
        );
      }
      if (all.some((x) => x.name === w.name))
        throw new Error(`workload name ${w.name} is used twice`);
      all.push({ order: 100, ...w, file });
    }
  }
  return all.sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
}

function select(all) {
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (only.length === 0) return all.filter((w) => w.default !== false);
  const match = (pattern, name) =>
    pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
  const unknown = only.filter((p) => !all.some((w) => match(p, w.name)));
  if (unknown.length) {
    throw new Error(
      `BENCH_ONLY: no workload named ${unknown.join(', ')}; known: ${all.map((w) => w.name).join(', ')}`,
    );
  }
  return all.filter((w) => only.some((p) => match(p, w.name)));
}

/** What a workload's run(ctx) gets. */
function makeContext(workload, pinning) {
  const params = [];
  const ctx = {
    quick,
    rounds,
    seconds,
    warmup,
    pinning: pinning.text,
    /** A numeric setting from the environment, recorded for the report. */
    param(name, full, short = full) {
      const v = number(name, full, short);
      params.push(`${name}=${v}`);
      return v;
    },
    log: (msg) => process.stderr.write(`  [${workload.name}] ${msg}\n`),
    startServer,
    /**
     * Servers take turns within each round (a fresh process per measurement), so drift in
     * the machine's load spreads over all of them; `fn(kind, server)` returns an object of
     * numbers and each comes back as the median over the rounds. Other options
     * ({pkgConfig, env, args}) go to startServer.
     */
    async series(kinds, fn, { rounds: n = rounds, ...serverOptions } = {}) {
      const samples = Object.fromEntries(kinds.map((k) => [k, []]));
      for (let r = 0; r < n; r++) {
        for (const k of kinds) {
          ctx.log(`round ${r + 1}/${n}: ${k}`);
          const server = await startServer(k, serverOptions);
          try {
            samples[k].push(await fn(k, server));
          } finally {
            await server.stop();
          }
        }
      }
      return Object.fromEntries(
        kinds.map((k) => {
          const keys = Object.keys(samples[k][0] ?? {});
          return [k, Object.fromEntries(keys.map((m) => [m, median(samples[k].map((s) => s[m]))]))];
        }),
      );
    },
    /** Runs `fn()` (which returns {rate, ops}) and adds the server's CPU µs per operation. */
    async throughput(server, fn) {
      const before = await server.cpu();
      const { rate, ops, ...rest } = await fn();
      const after = await server.cpu();
      return { rate, cpu: (after - before) / ops, ...rest };
    },
    /** The usual two rows: throughput (higher is better) and server CPU per operation. */
    rateAndCpuRows(res, { rate, op, baseline, peer }) {
      const values = (m) => Object.fromEntries(Object.entries(res).map(([k, v]) => [k, v[m]]));
      return [
        { label: rate, better: 'higher', digits: 0, values: values('rate'), baseline, peer },
        {
          label: `server CPU per ${op}, µs`,
          better: 'lower',
          digits: 2,
          values: values('cpu'),
          baseline,
          peer,
        },
      ];
    },
    params,
  };
  return ctx;
}

const fmt = (n, digits = 0) =>
  n === undefined || n === null || Number.isNaN(n)
    ? '—'
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const ratio = (a, b) => (a === undefined || b === undefined || !b ? '—' : (a / b).toFixed(2));

function printWorkload(w, result, params) {
  const out = [];
  out.push(`\n### ${w.title} (\`${w.name}\`)\n`);
  if (w.about) out.push(w.about);
  if (w.limits) out.push(`Limits: ${w.limits}`);
  if (params.length) out.push(`Parameters: ${params.join(', ')}`);
  if (result.rows?.length) {
    out.push('');
    out.push('| metric | @pkg/core | baseline | peer | pkg / baseline | pkg / peer |');
    out.push('|---|---|---|---|---|---|');
  }
  for (const row of result.rows ?? []) {
    const v = row.values;
    const d = row.digits ?? 0;
    const side = (k) => (k ? `${LABELS[k] ?? k} ${fmt(v[k], d)}` : '—');
    const better = row.better ? ` (${row.better} is better)` : '';
    out.push(
      `| ${row.label}${better} | ${fmt(v.pkg, d)} | ${side(row.baseline)} | ${side(row.peer)} | ${row.baseline ? ratio(v.pkg, v[row.baseline]) : '—'} | ${row.peer ? ratio(v.pkg, v[row.peer]) : '—'} |`,
    );
  }
  for (const table of result.tables ?? []) {
    out.push(
      '',
      `| ${table.columns.join(' | ')} |`,
      `|${table.columns.map(() => '---').join('|')}|`,
    );
    for (const r of table.rows) out.push(`| ${r.join(' | ')} |`);
  }
  for (const note of result.notes ?? []) out.push(`\n${note}`);
  console.log(out.join('\n'));
}

const all = await loadWorkloads();
let chosen;
try {
  chosen = select(all);
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
const pinning = setUpPinning();
usePinning(pinning);
console.log(
  `# Benchmarks\n\nnode ${process.version}, ${pinning.cores} cores, ${pinning.text}; ${quick ? 'QUICK mode, ' : ''}median of ${rounds} round(s), ${seconds} s per timed run after ${warmup} s of warm-up. Workloads: ${chosen.map((w) => w.name).join(', ')}.`,
);

const report = {
  node: process.version,
  pinning: pinning.text,
  quick,
  rounds,
  seconds,
  workloads: [],
};
let failed = 0;
for (const w of chosen) {
  const ctx = makeContext(w, pinning);
  process.stderr.write(`${w.name}...\n`);
  try {
    const result = await w.run(ctx);
    printWorkload(w, result, ctx.params);
    report.workloads.push({ name: w.name, title: w.title, params: ctx.params, ...result });
  } catch (err) {
    failed++;
    console.log(`\n### ${w.title} (\`${w.name}\`)\n\nFAILED: ${err?.stack ?? err}`);
    report.workloads.push({ name: w.name, error: String(err?.message ?? err) });
  }
}
if (process.env.BENCH_JSON)
  writeFileSync(process.env.BENCH_JSON, `${JSON.stringify(report, null, 2)}\n`);
process.exit(failed ? 1 : 0);
