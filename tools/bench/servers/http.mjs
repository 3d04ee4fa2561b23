// Raw node:http answering the same JSON document.
import http from 'node:http';

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/json') {
    const body = JSON.stringify({ hello: 'world' });
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  } else {
    res.writeHead(404).end();
  }
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${server.address().port}\n`));

// The runner asks for this process's CPU time (user + system, µs) with a line on stdin.
process.stdin.on('data', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`CPU ${user + system}\n`);
});
