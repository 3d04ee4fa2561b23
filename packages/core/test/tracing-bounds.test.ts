// What a client cannot make tracing keep: span names and attributes come from the app's
// routes (an event nobody handles is one fixed name, however long its name), and the
// upgrade request's trace context lives only as long as its connection, across resumes
// that give the connection another client id. Real `ws` clients, the SDK's in-memory
// exporter, and weak references to every context extracted from an upgrade request.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  context,
  propagation,
  trace,
  type Context,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Server } from '../src/index';
import { UNKNOWN_EVENT_SPAN } from '../src/observability/tracing';
import { TestClient, cleanup, startServer } from './helpers';

const TRACEPARENT = `00-${'4'.repeat(32)}-${'5'.repeat(16)}-01`;

/** The W3C propagator, keeping a weak reference to each context it extracts from an upgrade. */
class WatchedPropagator implements TextMapPropagator {
  readonly #inner = new W3CTraceContextPropagator();
  readonly upgrades: WeakRef<Context>[] = [];

  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    this.#inner.inject(ctx, carrier, setter);
  }

  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    const extracted = this.#inner.extract(ctx, carrier, getter);
    const headers = carrier as Record<string, unknown>;
    if (typeof headers === 'object' && headers !== null && 'sec-websocket-key' in headers) {
      this.upgrades.push(new WeakRef(extracted));
    }
    return extracted;
  }

  fields(): string[] {
    return this.#inner.fields();
  }
}

const exporter = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager();
const propagator = new WatchedPropagator();

beforeAll(() => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  context.setGlobalContextManager(contextManager.enable());
  propagation.setGlobalPropagator(propagator);
});

afterEach(async () => {
  await cleanup();
  exporter.reset();
});

afterAll(() => {
  trace.disable();
  context.disable();
  propagation.disable();
});

async function tracedServer(): Promise<{ server: Server; wsUrl: string }> {
  return startServer([], { tracing: true, shutdown_timeout: 200 }, (server) => {
    server.on('echo', function (this: { emit(id: string, e: string, d: object): void }, id, data) {
      this.emit(id, 'echoed', data as object);
    });
  });
}

describe('span names and attributes', () => {
  it('name an unknown event one fixed way, however long, and a handled one by its route', async () => {
    const { wsUrl } = await tracedServer();
    const client = await TestClient.connect(wsUrl);
    for (let i = 0; i < 5; i += 1) client.send(`${String(i)}${'x'.repeat(100_000)}`, {});
    client.send('echo', { n: 1 });
    // Errors for unknown events are answered at most once per interval: one here.
    expect((await client.next('error')).data['code']).toBe('unknown_event');
    await client.next('echoed');
    for (let i = 0; i < 200 && exporter.getFinishedSpans().length < 6; i += 1) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name).sort()).toEqual([
      'echo receive',
      ...Array<string>(5).fill(UNKNOWN_EVENT_SPAN),
    ]);
    for (const span of spans) {
      for (const value of Object.values(span.attributes)) {
        expect(String(value).length).toBeLessThanOrEqual(64);
      }
    }
    const unknown = spans.find((s) => s.name === UNKNOWN_EVENT_SPAN)!;
    expect(unknown.attributes['messaging.destination.name']).toBeUndefined();
    const echo = spans.find((s) => s.name === 'echo receive')!;
    expect(echo.attributes['messaging.destination.name']).toBe('echo');
  });
});

/** Collects garbage (the flag is set for this process; `gc` is taken from a fresh context). */
function collect(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
}

async function hello(
  url: string,
  data: Record<string, unknown>,
): Promise<{ client: TestClient; welcome: Record<string, unknown> }> {
  const client = await TestClient.connect(url, { headers: { traceparent: TRACEPARENT } }, [
    'pkg.v1',
  ]);
  client.sendRaw(JSON.stringify({ event: '$hello', data }));
  const welcome = await client.next('$welcome');
  return { client, welcome: welcome.data };
}

async function until(server: Server, open: number): Promise<void> {
  for (let i = 0; i < 300 && server.getLoad().openClients !== open; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(server.getLoad().openClients).toBe(open);
}

describe('the upgrade trace context', () => {
  it('is kept no longer than its connection, across resumes', async () => {
    const { server, wsUrl } = await tracedServer();
    const RESUMES = 20;
    let { client, welcome } = await hello(wsUrl, { v: 1 });
    for (let i = 0; i < RESUMES; i += 1) {
      client.ws.terminate();
      await until(server, 0);
      const resume = { session: welcome['session'], seq: 0 };
      ({ client, welcome } = await hello(wsUrl, { v: 1, resume }));
      expect(welcome['resumed']).toBe(true);
    }
    client.close();
    await client.closed;
    await until(server, 0);
    expect(propagator.upgrades).toHaveLength(RESUMES + 1);
    await new Promise((resolve) => setImmediate(resolve));
    collect();
    const alive = propagator.upgrades.filter((ref) => ref.deref() !== undefined).length;
    expect(alive).toBe(0);
  });
});
