// The Grafana dashboard in deploy/ is built on what the demo really exports: every metric an
// expression names is in the text `METRICS=1` serves at /metrics, and docs/observability.md
// describes every panel.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { useDemo } from './helpers/app';

interface Panel {
  type: string;
  title: string;
  description?: string;
  targets?: Array<{ expr: string }>;
}

const root = path.resolve(__dirname, '..', '..', '..');
const dashboard = JSON.parse(
  readFileSync(path.join(root, 'apps/demo/deploy/grafana-dashboard.json'), 'utf8'),
) as { panels: Panel[]; templating: { list: Array<{ definition?: string }> } };
const panels = dashboard.panels.filter((p) => p.type !== 'row');
const expressions = [
  ...panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
  ...dashboard.templating.list.flatMap((v) => (v.definition ? [v.definition] : [])),
];

/** Metric names in PromQL: every identifier with the prefix (the dashboard uses pkg_). */
const metricNames = (expr: string): string[] => expr.match(/\bpkg_[a-zA-Z0-9_:]+/g) ?? [];

describe('the Grafana dashboard', () => {
  const start = useDemo();

  it('names only metrics the demo serves at /metrics with METRICS=1', async () => {
    const demo = await start({ metrics: true });
    const res = await fetch(`${demo.http}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    // What the text declares (# TYPE) with the series a histogram has, and every sample:
    // a labelled metric with no sample yet is still exported.
    const exported = new Set<string>();
    for (const line of text.split('\n')) {
      const type = /^# TYPE (\S+) (\w+)$/.exec(line);
      if (type !== null) {
        const [, name, kind] = type;
        exported.add(name!);
        if (kind === 'histogram')
          for (const s of ['_bucket', '_count', '_sum']) exported.add(name! + s);
        if (kind === 'summary') for (const s of ['_count', '_sum']) exported.add(name! + s);
      } else if (line !== '' && !line.startsWith('#')) {
        exported.add(/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]);
      }
    }
    const named = [...new Set(expressions.flatMap(metricNames))].sort();
    expect(named.length).toBeGreaterThan(15);
    expect(named.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('does not serve /metrics without METRICS=1', async () => {
    const demo = await start();
    expect((await fetch(`${demo.http}/metrics`)).status).toBe(404);
  });

  it('covers connections, message rates, handler latency, refusals and the adapter', () => {
    const all = expressions.join('\n');
    for (const metric of [
      'pkg_ws_connections',
      'pkg_ws_messages_received_total',
      'pkg_ws_handler_duration_seconds_bucket',
      'pkg_http_request_duration_seconds_bucket',
      'pkg_refusals_total',
      'pkg_adapter_state',
      'pkg_adapter_publish_errors_total',
    ]) {
      expect([metric, all.includes(metric)]).toEqual([metric, true]);
    }
  });

  it('has every panel described in docs/observability.md', () => {
    const docs = readFileSync(path.join(root, 'docs/observability.md'), 'utf8');
    for (const panel of panels) {
      expect(panel.description?.length ?? 0).toBeGreaterThan(20);
      expect([panel.title, docs.includes(`**${panel.title}**`)]).toEqual([panel.title, true]);
    }
  });
});
