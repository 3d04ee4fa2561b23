// Tracing through @opentelemetry/api, checked with the SDK's in-memory exporter: the spans of
// HTTP requests and WebSocket messages, their parents (W3C traceparent on HTTP, the
// envelope's meta, the upgrade request's headers), failures, and nothing at all with
// tracing off.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { withLogScope } from '@pkg/logger';
import { TracingSlot } from '../src/observability/tracing-load';
import { eventOfText } from '../src/observability/tracing';
import type { ServerConfigOptions } from '../src/index';
import { cleanup, startServer, TestClient, type TestServer } from './helpers';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;

const exporter = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  context.setGlobalContextManager(contextManager.enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
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

/** Spans finished so far with that name (waits a little for ones that end asynchronously). */
async function spansNamed(name: string, count = 1): Promise<ReadableSpan[]> {
  for (let i = 0; i < 200; i += 1) {
    const found = exporter.getFinishedSpans().filter((s) => s.name === name);
    if (found.length >= count) return found;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(
    `no span "${name}"; finished: ${exporter
      .getFinishedSpans()
      .map((s) => s.name)
      .join(', ')}`,
  );
}

async function tracedServer(config: ServerConfigOptions = {}): Promise<TestServer> {
  return startServer([], { tracing: true, ...config }, (server) => {
    server.route('GET', '/users/{id}', (request) => ({ id: request.getParam('id') }));
    server.route('GET', '/boom', () => {
      throw new Error('route failed');
    });
    server.on('echo', function (this: { emit(id: string, e: string, d: object): void }, id, data) {
      this.emit(id, 'echoed', data as object);
    });
    server.on('slow', async () => {
      await new Promise((r) => setTimeout(r, 30));
      return { done: true };
    });
    server.on('fail', () => {
      throw new Error('handler failed');
    });
  });
}

describe('HTTP spans', () => {
  it('a SERVER span named by the route pattern, child of the traceparent header', async () => {
    const { base } = await tracedServer();
    const res = await fetch(`${base}/users/42?x=1`, {
      headers: { traceparent: TRACEPARENT, tracestate: 'vendor=1' },
    });
    expect(await res.json()).toEqual({ id: '42' });
    const [span] = await spansNamed('GET /users/{id}');
    expect(span!.kind).toBe(SpanKind.SERVER);
    expect(span!.spanContext().traceId).toBe(TRACE_ID);
    expect(span!.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(span!.spanContext().traceState?.get('vendor')).toBe('1');
    expect(span!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/users/{id}',
      'url.path': '/users/42',
      'http.response.status_code': 200,
    });
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a throwing route: status ERROR with the exception, and the client still gets 500', async () => {
    const { base } = await tracedServer();
    expect((await fetch(`${base}/boom`)).status).toBe(500);
    const [span] = await spansNamed('GET /boom');
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes['http.response.status_code']).toBe(500);
    expect(span!.events.map((e) => e.name)).toContain('exception');
  });

  it('an unknown path: a span named by the method only (never the raw path), a new trace', async () => {
    const { base } = await tracedServer();
    expect((await fetch(`${base}/no/such/1234`)).status).toBe(404);
    const [span] = await spansNamed('GET');
    expect(span!.attributes['http.route']).toBeUndefined();
    expect(span!.attributes['http.response.status_code']).toBe(404);
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
    expect(span!.parentSpanContext).toBeUndefined();
  });

  it('a malformed traceparent starts a new trace and the request is served', async () => {
    const { base } = await tracedServer();
    for (const bad of ['garbage', `00-${'0'.repeat(32)}-${PARENT_ID}-01`, 'x'.repeat(4000)]) {
      const res = await fetch(`${base}/users/1`, { headers: { traceparent: bad } });
      expect(res.status).toBe(200);
    }
    const spans = await spansNamed('GET /users/{id}', 3);
    for (const span of spans) {
      expect(span.parentSpanContext).toBeUndefined();
      expect(span.spanContext().traceId).not.toBe(TRACE_ID);
    }
  });
});

describe('WebSocket message spans', () => {
  it('`<event> receive`, child of the envelope meta, with messaging attributes', async () => {
    const { wsUrl } = await tracedServer();
    const client = await TestClient.connect(wsUrl);
    client.sendRaw(
      JSON.stringify({ event: 'echo', data: { n: 1 }, meta: { traceparent: TRACEPARENT } }),
    );
    expect((await client.next('echoed')).data).toEqual({ n: 1 });
    const [span] = await spansNamed('echo receive');
    expect(span!.kind).toBe(SpanKind.CONSUMER);
    expect(span!.spanContext().traceId).toBe(TRACE_ID);
    expect(span!.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(span!.attributes).toMatchObject({
      'messaging.operation.type': 'receive',
      'messaging.destination.name': 'echo',
      'network.protocol.name': 'websocket',
    });
    expect(typeof span!.attributes['messaging.client.id']).toBe('string');
  });

  it('without meta, the parent is the upgrade request traceparent; meta wins over it', async () => {
    const { wsUrl } = await tracedServer();
    const other = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
    const client = await TestClient.connect(wsUrl, { headers: { traceparent: other } });
    client.send('echo', { n: 1 });
    await client.next('echoed');
    client.sendRaw(JSON.stringify({ event: 'echo', data: {}, meta: { traceparent: TRACEPARENT } }));
    await client.next('echoed');
    const spans = await spansNamed('echo receive', 2);
    expect(spans.map((s) => s.spanContext().traceId).sort()).toEqual(
      [TRACE_ID, 'a'.repeat(32)].sort(),
    );
  });

  it('spans an asynchronous handler to its end; a failing handler marks the span ERROR', async () => {
    const { wsUrl } = await tracedServer();
    const client = await TestClient.connect(wsUrl, {}, ['pkg.v1']);
    client.send('$hello', { v: 1 });
    await client.next('$welcome');
    client.sendRaw(JSON.stringify({ event: 'slow', data: {}, id: 7 }));
    expect((await client.next('slow')).data).toEqual({ done: true });
    const [slow] = await spansNamed('slow receive');
    const ms = (slow!.duration[0] * 1e9 + slow!.duration[1]) / 1e6;
    expect(ms).toBeGreaterThanOrEqual(25);
    expect(slow!.attributes['messaging.message.id']).toBe('7');
    client.send('fail', {});
    expect((await client.next('error')).data).toMatchObject({ code: 'internal_error' });
    const [failed] = await spansNamed('fail receive');
    expect(failed!.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'handler failed' });
  });

  it('ignores a malformed or oversized meta: the message is handled, in a new trace', async () => {
    const { wsUrl } = await tracedServer();
    const client = await TestClient.connect(wsUrl);
    const metas = [
      'x',
      7,
      null,
      [],
      { traceparent: 5 },
      { traceparent: 'not-a-traceparent' },
      { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01${'0'.repeat(200)}` },
      { tracestate: 'a=1' },
    ];
    for (const meta of metas) {
      client.sendRaw(JSON.stringify({ event: 'echo', data: { meta: true }, meta }));
      expect((await client.next('echoed')).data).toEqual({ meta: true });
    }
    const spans = await spansNamed('echo receive', metas.length);
    for (const span of spans) expect(span.parentSpanContext).toBeUndefined();
  });
});

describe('tracing off (the default)', () => {
  it('makes no span for HTTP or WebSocket traffic, with a provider registered', async () => {
    const { base, wsUrl } = await tracedServer({ tracing: false });
    expect((await fetch(`${base}/users/1`, { headers: { traceparent: TRACEPARENT } })).status).toBe(
      200,
    );
    const client = await TestClient.connect(wsUrl);
    client.sendRaw(JSON.stringify({ event: 'echo', data: {}, meta: { traceparent: TRACEPARENT } }));
    await client.next('echoed');
    client.send('fail', {});
    await client.next('error');
    await new Promise((r) => setTimeout(r, 20));
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe('loading @opentelemetry/api', () => {
  it('a missing API is PKG_ERR_CORE_TRACING_UNAVAILABLE, saying what to install', async () => {
    const slot = new TracingSlot();
    const missing = (): Promise<unknown> => import('@opentelemetry/no-such-package' as string);
    const err = await slot.load(() => null, missing).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PKG_ERR_CORE_TRACING_UNAVAILABLE' });
    expect((err as Error).message).toMatch(/npm install @opentelemetry\/api/);
    expect(slot.current).toBeNull();
    // Something else under that name (no trace API) is refused the same way.
    const wrong = await slot
      .load(
        () => null,
        () => Promise.resolve({}),
      )
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ code: 'PKG_ERR_CORE_TRACING_UNAVAILABLE' });
  });

  it('reads the event name of a serialised envelope for the delivery span', () => {
    expect(eventOfText('{"event":"chat.said","data":{}}')).toBe('chat.said');
    expect(eventOfText('{"event":"a\\"b","data":{}}')).toBe('a"b');
    expect(eventOfText('{"data":{},"event":"x"}')).toBe('message');
    expect(eventOfText('')).toBe('message');
  });
});

describe('log correlation with tracing', () => {
  it('puts the trace id in the log scope of a traced request and message (log_context on)', async () => {
    const seen: Array<Readonly<Record<string, unknown>>> = [];
    const { base, wsUrl } = await startServer(
      [],
      { tracing: true, log_context: true },
      (server) => {
        server.route('GET', '/scope', () => {
          seen.push(withLogScope({}));
          return { ok: true };
        });
        server.on('scope', function (this: { emit(id: string, e: string, d: object): void }, id) {
          seen.push(withLogScope({}));
          this.emit(id, 'scoped', {});
        });
      },
    );
    await fetch(`${base}/scope`, { headers: { traceparent: TRACEPARENT } });
    expect(seen[0]).toMatchObject({ traceId: TRACE_ID, requestId: expect.any(String) });
    const client = await TestClient.connect(wsUrl);
    client.send('scope', {});
    await client.next('scoped');
    const [span] = await spansNamed('scope receive');
    expect(seen[1]).toMatchObject({ traceId: span!.spanContext().traceId });
    expect(seen[1]!['traceId']).not.toBe(TRACE_ID);
    await client.close();
  });

  it('leaves the trace id out without log_context, and outside any span', async () => {
    const seen: Array<Readonly<Record<string, unknown>>> = [];
    const { base } = await startServer([], { tracing: true }, (server) => {
      server.route('GET', '/scope', () => {
        seen.push(withLogScope({}));
        return { ok: true };
      });
    });
    await fetch(`${base}/scope`, { headers: { traceparent: TRACEPARENT } });
    expect(seen).toEqual([{}]);
  });
});
