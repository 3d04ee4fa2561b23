// Raw node:http answering the three bench routes by hand: GET /json, GET /users/{id},
// POST /echo (JSON echo). Limits: Node's defaults (no body limit of its own).
import http from 'node:http';
import { serve } from './control.mjs';

function json(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const url = req.url;
  if (req.method === 'GET' && url === '/json') {
    json(res, 200, { hello: 'world' });
  } else if (req.method === 'GET' && url.startsWith('/users/') && url.indexOf('/', 7) < 0) {
    json(res, 200, { id: decodeURIComponent(url.slice(7)) });
  } else if (req.method === 'POST' && url === '/echo') {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      let value;
      try {
        value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        json(res, 400, { error: 'invalid_json' });
        return;
      }
      json(res, 200, value);
    });
  } else {
    res.writeHead(404).end();
  }
});
server.listen(0, '127.0.0.1', () =>
  serve({
    port: server.address().port,
    count: () => 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }),
);
