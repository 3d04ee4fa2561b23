// Reads a callgrind dump of a Node process together with the perf map V8 writes under
// `--perf-basic-prof` (/tmp/perf-<pid>.map: start, size and name of every piece of code it
// compiles), so that JIT-compiled JavaScript gets its function's name and file instead of an
// address. Used by instructions.mjs (INSTR_PROFILE=1) to say where a server's instructions go.
import fs from 'node:fs';

/** The code ranges of a perf map, by start address; a later entry wins over an earlier one. */
function readPerfMap(file) {
  const ranges = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const first = line.indexOf(' ');
    const second = line.indexOf(' ', first + 1);
    if (first < 0 || second < 0) continue;
    const start = Number.parseInt(line.slice(0, first), 16);
    const size = Number.parseInt(line.slice(first + 1, second), 16);
    ranges.push({ start, end: start + size, name: line.slice(second + 1), order: ranges.length });
  }
  ranges.sort((a, b) => a.start - b.start);
  return ranges;
}

/** The name of the code that held `address` last, or undefined. */
function nameAt(ranges, address) {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid].start <= address) lo = mid + 1;
    else hi = mid - 1;
  }
  // Code can be freed and its memory reused: among the ranges that hold the address, the
  // last one written describes what ran there last.
  let best;
  for (let i = hi; i >= 0 && address - ranges[i].start < 1 << 22; i--) {
    const range = ranges[i];
    if (address < range.end && (best === undefined || range.order > best.order)) best = range;
  }
  return best?.name;
}

/**
 * Self instructions and the instructions of each call, per function. Returns
 * `{ total, summary, self: Map<name, n>, calls: Map<name, Map<callee, n>> }`: `total` sums
 * the cost lines read, `summary` is callgrind's own total of the dump (its `summary:` or
 * `totals:` line; NaN when it has none).
 */
export function readCallgrind(dumpFile, perfMapFile) {
  const ranges = perfMapFile && fs.existsSync(perfMapFile) ? readPerfMap(perfMapFile) : [];
  const ids = new Map();
  const resolve = (token) => {
    // `(12) name` the first time, `(12)` after that.
    const match = /^\((\d+)\)(?: (.*))?$/.exec(token);
    let name = token;
    if (match) {
      if (match[2] !== undefined) ids.set(match[1], match[2]);
      name = ids.get(match[1]) ?? token;
    }
    if (name.startsWith('0x')) {
      const address = Number.parseInt(name.split("'")[0], 16);
      const js = nameAt(ranges, address);
      if (js !== undefined) return js;
    }
    return name.replace(/'\d+$/, '');
  };
  const self = new Map();
  const calls = new Map();
  let current = '?';
  let callee;
  let inCall = false;
  let total = 0;
  let summary = Number.NaN;
  for (const line of fs.readFileSync(dumpFile, 'utf8').split('\n')) {
    if (line.startsWith('summary: ') || line.startsWith('totals: ')) {
      summary = Number(line.slice(line.indexOf(' ') + 1));
      continue;
    }
    if (line.startsWith('fn=')) {
      current = resolve(line.slice(3));
      continue;
    }
    if (line.startsWith('cfn=')) {
      callee = resolve(line.slice(4));
      continue;
    }
    if (line.startsWith('calls=')) {
      inCall = true;
      continue;
    }
    const first = line.charCodeAt(0);
    const isCost =
      (first >= 48 && first <= 57) || line[0] === '+' || line[0] === '-' || line[0] === '*';
    if (!isCost) continue;
    const cost = Number(line.split(' ')[1]);
    if (!Number.isFinite(cost)) continue;
    if (inCall) {
      let byCallee = calls.get(current);
      if (byCallee === undefined) calls.set(current, (byCallee = new Map()));
      byCallee.set(callee, (byCallee.get(callee) ?? 0) + cost);
      inCall = false;
    } else {
      self.set(current, (self.get(current) ?? 0) + cost);
      total += cost;
    }
  }
  return { total, summary, self, calls };
}

/** V8's compilers at work (TurboFan's graph passes, register allocation, code installation). */
const COMPILING =
  /^v8::internal::(?:compiler|maglev|baseline)::|^v8::internal::Compiler::|CompilationJob/;

/**
 * The instructions the dump spent compiling code, not running it. A window that still holds
 * compilation counts work that a long-running server pays once, not per operation.
 */
export function compilingInstructions(profile) {
  let n = 0;
  for (const [name, own] of profile.self) if (COMPILING.test(name)) n += own;
  return n;
}

/**
 * JavaScript of the server and its packages: a script under a file path (ES modules as
 * `file:///…`, CommonJS as `/…`), unlike Node's own (`node:…`).
 */
export const SERVER_CODE = / (?:file:\/\/)?\//;

/** The layer a function of the dump belongs to, by its name. */
export function layerOf(name) {
  if (name.startsWith('JS:')) {
    return SERVER_CODE.test(name)
      ? 'JavaScript: the server and its packages'
      : "JavaScript: Node's own";
  }
  if (name.startsWith('RegExp:')) return 'regular expressions';
  if (name.startsWith('Builtins_')) return "V8's built-ins";
  return 'native (V8, Node, libc, kernel entry)';
}

/**
 * The JavaScript functions whose file matches `filePattern`, heaviest first: inclusive
 * instructions per operation (their own and everything they call), their own, and their
 * heaviest callees. Functions inlined by the optimiser count as part of their caller.
 */
export function heaviestFunctions(
  profile,
  filePattern,
  operations,
  { limit = 25, callees = 6 } = {},
) {
  const rows = [];
  for (const [name, own] of profile.self) {
    if (!name.startsWith('JS:') || !filePattern.test(name)) continue;
    const byCallee = profile.calls.get(name) ?? new Map();
    let inclusive = own;
    for (const cost of byCallee.values()) inclusive += cost;
    rows.push({
      name: shortName(name),
      inclusive: inclusive / operations,
      self: own / operations,
      callees: [...byCallee]
        .sort((a, b) => b[1] - a[1])
        .slice(0, callees)
        .map(([callee, cost]) => ({ name: shortName(callee), inclusive: cost / operations })),
    });
  }
  return rows.sort((a, b) => b.inclusive - a.inclusive).slice(0, limit);
}

/** `JS:*handle file:///…/packages/http/dist/index.js:12:3` as `handle (http/dist/index.js:12)`. */
function shortName(name) {
  const match = /^JS:[*^~+]?(\S*) (?:file:\/\/)?(\S+?):(\d+):\d+$/.exec(name);
  if (!match) return name;
  const file = match[2].replace(/^.*\/(packages|tools|node_modules)\//, '');
  return `${match[1] || '(anonymous)'} (${file}:${match[3]})`;
}
