// A crowd of idle protocol version 1 clients for tools/bench/admin.mjs, in its own process
// (a process holds at most `ulimit -n` sockets): argv PORT FROM COUNT. Client i (FROM <= i <
// FROM+COUNT) says $hello as `user-<i>`, joins `room-<i % 5000>`, and every tenth one also
// joins the presence room `p:lobby-<i % 20>` and the history room `h:news-<i % 20>`. Prints
// `READY <n>` once every client is in; exits when stdin ends. At most 200 handshakes at once.
import { createInterface } from 'node:readline';
import WebSocket from 'ws';

const [port, from, count] = process.argv.slice(2).map(Number);
const sockets = [];

function open(i) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, ['pkg.v1'], { perMessageDeflate: false });
    const rooms = [`room-${i % 5000}`];
    if (i % 10 === 0) rooms.push(`p:lobby-${i % 20}`, `h:news-${i % 20}`);
    let waiting = rooms.length;
    ws.once('error', reject);
    ws.on('open', () => {
      ws.send(JSON.stringify({ event: '$hello', data: { v: 1, auth: `user-${i}` } }));
    });
    ws.on('message', (raw) => {
      const text = raw.toString();
      if (text.startsWith('{"event":"$welcome"')) {
        rooms.forEach((room, n) =>
          ws.send(JSON.stringify({ event: 'join_room', data: { room }, id: `j${n}` })),
        );
      } else if (waiting > 0 && /"id":"j\d+"/.test(text)) {
        waiting -= 1;
        if (waiting === 0) {
          ws.removeAllListeners('error');
          ws.on('error', () => {});
          resolve(ws);
        }
      }
    });
  });
}

let next = from;
const end = from + count;
async function worker() {
  while (next < end) {
    const i = next++;
    sockets.push(await open(i));
  }
}
await Promise.all(Array.from({ length: Math.min(200, count) }, worker));
process.stdout.write(`READY ${sockets.length}\n`);
createInterface({ input: process.stdin }).on('close', () => process.exit(0));
