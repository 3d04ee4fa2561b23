// Fastify with its defaults and no logger.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/json', async () => ({ hello: 'world' }));
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`PORT ${app.server.address().port}\n`);
