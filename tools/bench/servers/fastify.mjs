// Fastify with its defaults and no logger.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/json', async () => ({ hello: 'world' }));
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`PORT ${app.server.address().port}\n`);

// The runner asks for this process's CPU time (user + system, µs) with a line on stdin.
process.stdin.on('data', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`CPU ${user + system}\n`);
});
