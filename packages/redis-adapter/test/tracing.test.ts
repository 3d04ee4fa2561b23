// One trace across two instances: an HTTP request to instance A whose handler broadcasts to
// a room; instance B delivers it to its member through Redis. With `tracing` on, A's HTTP
// span, A's publish span and B's delivery span share one trace id (checked with the SDK's
// in-memory exporter, two in-process servers, real Redis). A WebSocket message that carries
// `meta.traceparent` joins the sender's trace the same way.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { NullLogger, Server, ServerConfig, type ServerConfigOptions } from '@pkg/core';
import { RedisAdapter } from '../src/index';
import { sharedRedisAvailableSync, waitFor } from './helpers';

const available = sharedRedisAvailableSync('redis-adapter tracing');
const describeRedis = available ? describe : describe.skip;

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

const exporter = new InMemorySpanExporter();
const servers: Server[] = [];
const sockets: WebSocket[] = [];

beforeAll(() => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  for (const server of servers.splice(0)) await server.close();
  exporter.reset();
});

afterAll(() => {
  trace.disable();
  context.disable();
  propagation.disable();
});

/** An instance with the Redis adapter: POST /say/{room} and the event `say` broadcast to a room. */
async function instance(keyPrefix: string, config: ServerConfigOptions = {}): Promise<Server> {
  const server = new Server(
    new ServerConfig({
      host: '127.0.0.1',
      port: 0,
      heartbeat_interval: 0,
      restart_spread: 0,
      tracing: true,
      ...config,
    }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  const adapter = new RedisAdapter({ keyPrefix, logger: new NullLogger() });
  server.setAdapter(adapter);
  server.on('join', (clientId, data) => {
    const room = (data as { room: string }).room;
    server.joinRoom(clientId, room);
    server.send(clientId, 'joined', { room });
  });
  server.on('say', (_clientId, data) => {
    const { room, text } = data as { room: string; text: string };
    server.broadcast('said', { text }, null, room);
  });
  server.route('POST', '/say/{room}', (request) => {
    server.broadcast('said', { text: 'from http' }, null, String(request.getParam('room')));
    return { sent: true };
  });
  await server.run();
  await adapter.ready();
  servers.push(server);
  return server;
}

/** A `ws` client in `room` on `server`; resolves with the next `said` it gets. */
async function member(
  server: Server,
  room: string,
): Promise<{ ws: WebSocket; said: () => Promise<unknown> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${server.getPort()}`);
  sockets.push(ws);
  const inbox: Array<{ event: string; data: unknown }> = [];
  ws.on('message', (raw) =>
    inbox.push(JSON.parse(String(raw)) as { event: string; data: unknown }),
  );
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  ws.send(JSON.stringify({ event: 'join', data: { room } }));
  await waitFor(() => inbox.some((m) => m.event === 'joined'), 'the join');
  return {
    ws,
    said: async () => {
      await waitFor(() => inbox.some((m) => m.event === 'said'), 'a broadcast');
      return inbox.find((m) => m.event === 'said')!.data;
    },
  };
}

async function spansNamed(name: string): Promise<ReadableSpan[]> {
  await waitFor(
    () => exporter.getFinishedSpans().some((s) => s.name === name),
    `a span named ${name}`,
  );
  return exporter.getFinishedSpans().filter((s) => s.name === name);
}

describeRedis('tracing across instances (Redis adapter)', () => {
  it('HTTP on A -> handler -> broadcast -> delivery on B: one trace id, parent by parent', async () => {
    const prefix = `trace-${randomUUID()}`;
    const a = await instance(prefix);
    const b = await instance(prefix);
    const onB = await member(b, 'lobby');
    // B has subscribed to the room's channel once its member joined.
    await new Promise((r) => setTimeout(r, 100));

    const res = await fetch(`http://127.0.0.1:${a.getPort()}/say/lobby`, {
      method: 'POST',
      headers: { traceparent: TRACEPARENT },
    });
    expect(res.status).toBe(200);
    expect(await onB.said()).toEqual({ text: 'from http' });

    const [http] = await spansNamed('POST /say/{room}');
    const [publish] = await spansNamed('said publish');
    const [delivery] = await spansNamed('said process');
    for (const span of [http, publish, delivery]) {
      expect(span!.spanContext().traceId).toBe(TRACE_ID);
    }
    expect(publish!.kind).toBe(SpanKind.PRODUCER);
    expect(publish!.parentSpanContext?.spanId).toBe(http!.spanContext().spanId);
    expect(delivery!.kind).toBe(SpanKind.CONSUMER);
    expect(delivery!.parentSpanContext?.spanId).toBe(publish!.spanContext().spanId);
    expect(delivery!.attributes['messaging.batch.message_count']).toBe(1);
  });

  it('a WebSocket message with meta.traceparent: its handler broadcast joins that trace on B', async () => {
    const prefix = `trace-${randomUUID()}`;
    const a = await instance(prefix);
    const b = await instance(prefix);
    const onB = await member(b, 'room-1');
    const sender = await member(a, 'room-1');
    await new Promise((r) => setTimeout(r, 100));
    sender.ws.send(
      JSON.stringify({
        event: 'say',
        data: { room: 'room-1', text: 'hi' },
        meta: { traceparent: TRACEPARENT },
      }),
    );
    expect(await onB.said()).toEqual({ text: 'hi' });
    const [receive] = await spansNamed('say receive');
    const [delivery] = await spansNamed('said process');
    expect(receive!.spanContext().traceId).toBe(TRACE_ID);
    expect(delivery!.spanContext().traceId).toBe(TRACE_ID);
  });

  it('a broadcast outside any span carries no trace and B makes no span for it', async () => {
    const prefix = `trace-${randomUUID()}`;
    const a = await instance(prefix);
    const b = await instance(prefix);
    const onB = await member(b, 'quiet');
    await new Promise((r) => setTimeout(r, 100));
    a.broadcast('said', { text: 'plain' }, null, 'quiet');
    expect(await onB.said()).toEqual({ text: 'plain' });
    const names = exporter.getFinishedSpans().map((s) => s.name);
    expect(names).not.toContain('said publish');
    expect(names).not.toContain('said process');
  });

  it('an instance with tracing off delivers a traced broadcast without a span', async () => {
    const prefix = `trace-${randomUUID()}`;
    const a = await instance(prefix);
    const b = await instance(prefix, { tracing: false });
    const onB = await member(b, 'mixed');
    await new Promise((r) => setTimeout(r, 100));
    await fetch(`http://127.0.0.1:${a.getPort()}/say/mixed`, {
      method: 'POST',
      headers: { traceparent: TRACEPARENT },
    });
    expect(await onB.said()).toEqual({ text: 'from http' });
    await spansNamed('said publish');
    expect(exporter.getFinishedSpans().map((s) => s.name)).not.toContain('said process');
  });
});
