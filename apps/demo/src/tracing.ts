// OpenTelemetry for the demo, the one file that knows the SDK: with OTEL_EXPORTER_OTLP_ENDPOINT
// set, spans go over OTLP/HTTP to `<endpoint>/v1/traces` and the server runs with
// `tracing: true`. The SDK is imported only then, so a demo without it starts as before.

/** A running tracer provider: `shutdown()` exports what is buffered and stops. */
export interface DemoTracing {
  shutdown(): Promise<void>;
}

/**
 * Registers a Node tracer provider (AsyncLocalStorage context, W3C propagation) that
 * batches spans to the OTLP/HTTP endpoint, e.g. `http://127.0.0.1:4318`.
 */
export async function startTracing(endpoint: string): Promise<DemoTracing> {
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  return { shutdown: () => provider.shutdown() };
}
