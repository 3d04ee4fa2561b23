/**
 * Counters and histograms for the hot paths: recording is a Map lookup and an addition per
 * message, with no label object to hash. They hand their values to prom-client's registry
 * in its own metric shape (`name`, `help`, `type`, `get()`), so prom-client still writes the
 * text; prom-client's own Counter and Histogram hash a label object on every call, which
 * costs more per message than the rest of an echo.
 */

/** One sample as prom-client's registry reads it. */
interface Value {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName?: string;
}

/** A metric prom-client's `Registry.registerMetric` accepts. */
export interface RegistryMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  get(): { name: string; help: string; type: string; values: Value[]; aggregator: 'sum' };
}

/** A counter with label values fixed per series; `key` joins them with `\u0000`. */
export class FastCounter implements RegistryMetric {
  readonly type = 'counter';
  readonly #series = new Map<string, { labels: Record<string, string>; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** Adds `n` to the series of these label values (in the order of `labelNames`). */
  inc(values: readonly string[], n = 1): void {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    const cell = this.#series.get(key);
    if (cell !== undefined) {
      cell.value += n;
      return;
    }
    const labels: Record<string, string> = {};
    this.labelNames.forEach((label, i) => (labels[label] = values[i]!));
    this.#series.set(key, { labels, value: n });
  }

  get() {
    const values = [...this.#series.values()].map(({ labels, value }) => ({ labels, value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' as const }; // prettier-ignore
  }
}

interface HistogramCell {
  readonly labels: Record<string, string>;
  readonly counts: number[];
  sum: number;
  count: number;
}

/** A histogram with fixed buckets (upper bounds, ascending), per label values. */
export class FastHistogram implements RegistryMetric {
  readonly type = 'histogram';
  readonly #series = new Map<string, HistogramCell>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {}

  observe(values: readonly string[], value: number): void {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let cell = this.#series.get(key);
    if (cell === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((label, i) => (labels[label] = values[i]!));
      cell = { labels, counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.#series.set(key, cell);
    }
    const buckets = this.buckets;
    for (let i = 0; i < buckets.length; i += 1) {
      if (value <= buckets[i]!) {
        cell.counts[i]! += 1;
        break;
      }
    }
    cell.sum += value;
    cell.count += 1;
  }

  get() {
    const values: Value[] = [];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.name}_bucket` }); // prettier-ignore
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${this.name}_bucket` }); // prettier-ignore
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' as const }; // prettier-ignore
  }
}
