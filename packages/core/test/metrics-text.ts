// Reading the Prometheus text exposition format in tests: a strict parser (every line is a
// comment, a HELP/TYPE line or a sample), and `promtool check metrics` when it can be had.
import { spawnSync } from 'node:child_process';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;

/** Parses the text; throws on any line that is not valid exposition format. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) continue;
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (!/^(counter|gauge|histogram|summary|untyped)$/.test(type ?? '')) {
        throw new Error(`bad TYPE line: ${line}`);
      }
      if (types.has(name!)) throw new Error(`metric ${name} declared twice`);
      types.set(name!, type!);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (m === null) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const at = LABEL.lastIndex;
      const l = LABEL.exec(body);
      if (l === null) throw new Error(`bad labels at ${at} in ${JSON.stringify(line)}`);
      labels[l[1]!] = l[2]!;
    }
    // Go's ParseFloat, which Prometheus uses, takes NaN and Inf in any case.
    const raw = m[3]!.toLowerCase();
    const value = raw === 'nan' ? NaN : raw === '+inf' ? Infinity : raw === '-inf' ? -Infinity : Number(raw); // prettier-ignore
    if (Number.isNaN(value) && raw !== 'nan') throw new Error(`bad value in ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return samples;
}

/** The value of one sample (labels must match exactly the given ones, others ignored). */
export function valueOf(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return found?.value;
}

/** The sum of every sample of a name. */
export function sumOf(samples: readonly Sample[], name: string): number {
  return samples.filter((s) => s.name === name).reduce((a, s) => a + s.value, 0);
}

let promtool: string | null | undefined;

/**
 * `promtool` (Debian's package `prometheus`), installed with apt-get when missing and we are
 * root; null when it cannot be had (the parser above checks the text then).
 */
export function findPromtool(): string | null {
  if (promtool !== undefined) return promtool;
  const has = (): boolean => spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!has() && process.getuid?.() === 0) {
    spawnSync(
      'sh',
      [
        '-c',
        'apt-get -o DPkg::Lock::Timeout=300 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends prometheus',
      ],
      { stdio: 'ignore', timeout: 300_000 },
    );
  }
  promtool = has() ? 'promtool' : null;
  if (promtool === null) console.warn('promtool not available: metrics text checked by parsing only.'); // prettier-ignore
  return promtool;
}

/**
 * Runs `promtool check metrics` on the text. Returns null without promtool, else the parse
 * error (exit 1) or the lint problems (exit 3) it reported, one a line: prom-client's own
 * process metrics have three it names (`nodejs_active_*_total` gauges), which the caller may
 * leave out.
 */
export function promtoolCheck(text: string): { status: number; problems: string[] } | null {
  const tool = findPromtool();
  if (tool === null) return null;
  const result = spawnSync(tool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  const problems = `${result.stdout}${result.stderr}`.split('\n').filter((l) => l.trim() !== '');
  return { status: result.status ?? -1, problems };
}
