// One abusive WebSocket client in its own process: after `go` on stdin it sends one kind of
// frame as fast as the socket takes it (keeping at most 256 KiB unsent) and keeps reading
// whatever the server answers. It stops at `stop`, after BENCH_FLOOD_MAX_SECONDS or
// BENCH_FLOOD_MAX_FRAMES, or when the server closes, and prints `DONE <json>`.
//   node flooder.mjs <port> <invalid-json | unknown-event | valid-event>
import { createInterface } from 'node:readline';
import WebSocket from 'ws';

const FRAMES = {
  'invalid-json': '{not json}',
  'unknown-event': JSON.stringify({ event: 'no.such.event', data: {} }),
  'valid-event': JSON.stringify({ event: 'echo', data: { n: 1 } }),
};
const [port, kind] = process.argv.slice(2);
const frame = FRAMES[kind];
if (!frame) throw new TypeError(`flooder: kind must be one of ${Object.keys(FRAMES).join(', ')}`);
const maxSeconds = Number(process.env.BENCH_FLOOD_MAX_SECONDS ?? 60);
const maxFrames = Number(process.env.BENCH_FLOOD_MAX_FRAMES ?? 10_000_000);
const HIGH_WATER = 256 * 1024;

const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
let sent = 0;
let received = 0;
let receivedBytes = 0;
let flooding = false;
let finished = false;
let t0 = 0n;
let closeCode = null;

ws.on('message', (data) => {
  received++;
  receivedBytes += data.length;
});
ws.on('error', () => {});
ws.on('close', (code) => {
  closeCode = code;
  finish('closed');
});
ws.on('open', () => process.stdout.write('READY\n'));

function finish(why) {
  if (finished) return;
  finished = true;
  flooding = false;
  const seconds = t0 ? Number(process.hrtime.bigint() - t0) / 1e9 : 0;
  const result = {
    why,
    sent,
    received,
    receivedBytes,
    seconds,
    closeCode,
    frameBytes: frame.length,
  };
  process.stdout.write(`DONE ${JSON.stringify(result)}\n`, () => process.exit(0));
  ws.terminate();
}

function pump() {
  if (!flooding) return;
  if (sent >= maxFrames) return finish('max frames');
  if (Number(process.hrtime.bigint() - t0) / 1e9 >= maxSeconds) return finish('max seconds');
  let batch = 0;
  while (ws.bufferedAmount < HIGH_WATER && batch < 1000 && sent < maxFrames) {
    ws.send(frame);
    sent++;
    batch++;
  }
  if (ws.bufferedAmount >= HIGH_WATER) setTimeout(pump, 1);
  else setImmediate(pump);
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line === 'go' && !flooding && !finished && ws.readyState === WebSocket.OPEN) {
    flooding = true;
    t0 = process.hrtime.bigint();
    pump();
  } else if (line === 'stop') finish('stopped');
});
lines.on('close', () => finish('stdin closed'));
