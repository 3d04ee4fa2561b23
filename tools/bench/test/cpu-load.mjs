// The load side of cpu-regression.test.ts, in its own process so that the test process's
// CPU time is the servers' alone. Orders arrive on stdin, one a line; each is answered with
// `done` on stdout once every operation of it has completed:
//   http <port> <path> <count>   GET requests, `CONNECTIONS` keep-alive connections at once
//   ws <port> <count>            `echo` round trips over `CONNECTIONS` WebSocket clients
// Any failure (an answer other than 200, a socket error) is printed as `error <text>` and
// ends the process with code 1. The end of stdin ends the process.
import http from 'node:http';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';

const CONNECTIONS = 8;
const ECHO = '{"event":"echo","data":{"n":1,"text":"hello"}}';
const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
/** Open WebSocket clients by port, kept between orders. */
const sockets = new Map();

function fail(err) {
  process.stdout.write(`error ${err?.message ?? err}\n`);
  process.exit(1);
}

function get(port, path) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
  });
}

async function runHttp(port, path, count) {
  let left = count;
  const worker = async () => {
    while (left > 0) {
      left -= 1;
      await get(port, path);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
}

function open(port) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}`);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

async function runWs(port, count) {
  let clients = sockets.get(port);
  if (clients === undefined) {
    clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => open(port)));
    for (const ws of clients) ws.on('error', fail);
    sockets.set(port, clients);
  }
  let sent = 0;
  let received = 0;
  await new Promise((resolve) => {
    for (const ws of clients) {
      ws.removeAllListeners('message');
      ws.on('message', () => {
        received += 1;
        if (received === count) resolve();
        else if (sent < count) {
          sent += 1;
          ws.send(ECHO);
        }
      });
    }
    for (const ws of clients) {
      if (sent < count) {
        sent += 1;
        ws.send(ECHO);
      }
    }
  });
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [kind, port, a, b] = line.trim().split(' ');
  const work =
    kind === 'http' ? runHttp(Number(port), a, Number(b)) : runWs(Number(port), Number(a));
  work.then(() => process.stdout.write('done\n'), fail);
});
lines.on('close', () => {
  for (const clients of sockets.values()) for (const ws of clients) ws.terminate();
  agent.destroy();
  process.exit(0);
});
