// Fastify with its defaults and no logger, the same three routes as servers/http.mjs.
// Limits: Fastify's defaults (bodyLimit 1 MiB).
import Fastify from 'fastify';
import { serve } from './control.mjs';

const app = Fastify({ logger: false });
app.get('/json', async () => ({ hello: 'world' }));
app.get('/users/:id', async (request) => ({ id: request.params.id }));
app.post('/echo', async (request) => request.body);
await app.listen({ port: 0, host: '127.0.0.1' });
serve({ port: app.server.address().port, count: () => 0, close: () => app.close() });
