// OTEL_EXPORTER_OTLP_ENDPOINT turns the demo's tracing on: a request's span reaches an OTLP
// collector over HTTP (a plain node:http server standing in for one, on 127.0.0.1 port 0),
// exported at the latest when the demo closes. The demo runs in its own process (bundled
// from the sources), as it does in production: the OTLP exporter loads node:http with a
// dynamic import, which Jest's module system does not run.
import { afterAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NullLogger } from '@pkg/core';
import { startDemo } from '../src/app';
import { bundleInstance, startInstance } from './helpers/nginx';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

const dir = mkdtempSync(path.join(tmpdir(), 'pkg-otlp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the demo with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('exports the span of an HTTP request to the collector, in the caller trace', async () => {
    const posts: Array<{ path: string; type: string; body: Buffer }> = [];
    const collector = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        posts.push({
          path: req.url ?? '',
          type: String(req.headers['content-type']),
          body: Buffer.concat(chunks),
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const address = collector.address() as { port: number };
    try {
      const instance = await startInstance(bundleInstance(dir), {
        host: '127.0.0.1',
        port: 0,
        otlpEndpoint: `http://127.0.0.1:${address.port}/`,
      });
      const res = await fetch(`http://127.0.0.1:${instance.port}/api/whoami`, {
        headers: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
      });
      expect(res.status).toBe(200);
      await instance.stop(); // SIGTERM: close() flushes the batch
      const traces = posts.filter((p) => p.path === '/v1/traces');
      expect(traces.length).toBeGreaterThan(0);
      // OTLP/HTTP JSON: the span, its route name and the caller's trace id.
      const text = traces.map((p) => p.body.toString('utf8')).join('\n');
      expect(traces[0]!.type).toContain('application/json');
      expect(text).toContain('GET /api/whoami');
      expect(text).toContain(TRACE_ID);
    } finally {
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    }
  });

  it('leaves tracing off without it', async () => {
    const app = await startDemo({ host: '127.0.0.1', port: 0 }, { logger: new NullLogger() });
    expect(app.server.getConfig().isTracing()).toBe(false);
    await app.close();
  });
});
