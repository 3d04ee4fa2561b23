import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpHandler, RateLimiter, Response } from '@pkg/http';

const limiter = new RateLimiter(); // in-memory counters, capped at 10000 keys

const handler = new HttpHandler({
  cors: { allowed_origins: ['http://localhost:5173'] },
  trustProxy: ['loopback'], // believe X-Forwarded-* only from a proxy on this machine
  maxBodySize: 64 * 1024, // 413 above 64 KiB
  dispatch: async (request) => {
    if (request.isMethod('GET') && request.getPath() === '/hello') {
      const name = request.getQuery('name', 'world');
      return Response.json({ hello: name, from: request.getIpAddress() });
    }
    if (request.isMethod('POST') && request.getPath() === '/notes') {
      const key = RateLimiter.keyFor('POST /notes', request);
      const limit = await limiter.check(key, { maxCount: 3, timeWindow: 60 });
      if (!limit.allowed) return RateLimiter.tooManyRequests(limit);
      const text = request.getData('text');
      const response =
        typeof text === 'string'
          ? Response.json({ saved: text }, 201)
          : Response.badRequest('text is required');
      return RateLimiter.applyHeaders(response, limit); // on every answer of the route
    }
    return Response.notFound();
  },
});

const server = createServer((req, res) => void handler.handle(req, res));
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`listening on http://127.0.0.1:${port}`);
});
