// Where an idle WebSocket connection's heap goes: a V8 heap snapshot of the server before and
// after N idle connections, the difference by kind of object, per connection. Run `pnpm build`
// first.
//
//   node tools/bench/heap-per-connection.mjs [server] [connections]   default: pkg 1000
//
// server: pkg, ws, fastify-ws, socket.io, or the absolute path of a server file (an earlier
// build, bundled). The server runs with its defaults (the library: heartbeat on, as in
// ws-idle-memory); 20 connections come and go first, then a snapshot (after full GCs), then
// the clients connect 100 at a time and stay idle, then a second snapshot. Each line is one
// kind of heap object (its snapshot type and name: a class, `(closure)` and the function's
// name, `(array)`, strings, hidden V8 objects) with how many were added and their own bytes
// per connection; the total is the snapshot's own sizes added up (without what V8 keeps
// outside objects, so below the heap figure of ws-idle-memory). HEAP_KEEP=1 keeps the files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clientFor, closeAll, connectMany } from './lib/clients.mjs';
import { sleep, startServer } from './lib/proc.mjs';
import { waitForCount } from './lib/wait.mjs';

const [serverName = 'pkg', countText = '1000'] = process.argv.slice(2);
const connections = Number(countText);
if (!Number.isInteger(connections) || connections < 1) {
  process.stderr.write('usage: node tools/bench/heap-per-connection.mjs [server] [connections]\n');
  process.exit(2);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pkg-heap-'));
const kind = clientFor(serverName);

/** Own bytes and count of the snapshot's nodes, by `type name`. */
function groups(file) {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8'));
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const width = fields.length;
  const nodes = snap.nodes;
  const out = new Map();
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + iType]];
    let name = snap.strings[nodes[i + iName]];
    // Strings and numbers are told apart by type only; their text would make one group each.
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = '';
    if (type === 'number' || type === 'code') name = '';
    if (name.length > 60) name = `${name.slice(0, 57)}...`;
    const key = `${type} ${name}`.trim();
    const g = out.get(key) ?? { bytes: 0, count: 0 };
    g.bytes += nodes[i + iSize];
    g.count += 1;
    out.set(key, g);
  }
  return out;
}

const server = await startServer(serverName);
let clients = [];
try {
  await closeAll(await connectMany(kind, server.port, 20, 20));
  await waitForCount(server, 0);
  const before = await server.snapshot(path.join(dir, 'before.heapsnapshot'));
  clients = await connectMany(kind, server.port, connections, 100);
  await waitForCount(server, connections);
  await sleep(500);
  const after = await server.snapshot(path.join(dir, 'after.heapsnapshot'));
  const a = groups(before);
  const b = groups(after);
  const rows = [];
  let total = 0;
  for (const [key, g] of b) {
    const old = a.get(key) ?? { bytes: 0, count: 0 };
    const bytes = (g.bytes - old.bytes) / connections;
    const count = (g.count - old.count) / connections;
    total += bytes;
    rows.push({ key, bytes, count });
  }
  rows.sort((x, y) => y.bytes - x.bytes);
  const out = [
    `# Heap per idle connection: ${serverName}, ${connections.toLocaleString('en')} connections (own sizes in the V8 heap snapshot, after full GCs)`,
    '',
    `total: ${total.toFixed(0)} bytes per connection`,
    '',
    '| bytes per connection | objects per connection | kind |',
    '|---|---|---|',
  ];
  for (const r of rows
    .filter((r) => Math.abs(r.bytes) >= 4)
    .slice(0, Number(process.env.HEAP_TOP ?? 30))) {
    out.push(`| ${r.bytes.toFixed(0)} | ${r.count.toFixed(2)} | ${r.key.replace(/\|/g, '\\|')} |`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await closeAll(clients);
  await server.stop();
  if (process.env.HEAP_KEEP === '1') process.stderr.write(`snapshots kept in ${dir}\n`);
  else fs.rmSync(dir, { recursive: true, force: true });
}
