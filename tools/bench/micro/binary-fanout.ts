// Times the fan-out of one 64 KiB binary payload to many clients, the ways a server can send
// it, to back the choice of docs/protocol.md's binary frame (the per-receiver `seq` at the
// end of the header, the frame sent as one Buffer). Run `pnpm build` first, then:
//
//   node tools/bench/dist/binary-fanout.js [clients=200] [rounds=20]
//
// The clients run in a child process (so the figures are the server's own CPU), all on
// loopback. Each round sends the payload once to every client; a round ends when every
// client has received it. Ways:
//
// - `ws, shared Buffer`: raw `ws`, the same bytes to everyone (no header: the floor);
// - `shared frame`: `sendBinaryToMany` of one frame built once (no per-receiver member);
// - `seq per receiver, joined`: `appendBinarySeq` on a header built once, joined with the
//   payload into one Buffer per receiver (the payload copied once for each);
// - `seq per receiver`: the same header and `sendBinary` of `[header, payload]`, which
//   sends the pair as two fragments of one message (the payload shared, never copied);
// - `ws, two fragments`: raw `ws`, the header as a first fragment (`fin: false`) and the
//   shared payload as the second: no copy, one more frame on the wire;
// - `@pkg/core, room broadcast`: `server.broadcast(event, bytes, { room })` of the library
//   (its defaults: `max_buffered_amount` 4 MiB, no heartbeat) to version 1 clients in one
//   room, with sessions (`recovery_window` 120 s: each receiver's `seq` appended to a header
//   built once, two fragments) and without (`recovery_window: 0`: one frame for all).
//   `@pkg/core` is this workspace's build (`pnpm build` at the root first).
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import {
  SUBPROTOCOL,
  appendBinarySeq,
  encodeBinaryFrame,
  encodeBinaryHeader,
} from '../../../packages/wire/src/index';
import { WebSocketHandler } from '../../../packages/ws-protocol/src/index';
import { NullLogger, Server, ServerConfig } from '@pkg/core';

const PAYLOAD = 64 * 1024;

async function clients(url: string, count: number, hello: boolean): Promise<void> {
  let bytes = 0;
  let want = 0;
  const sockets: WebSocket[] = [];
  for (let i = 0; i < count; i += 1) {
    const ws = new WebSocket(url, [SUBPROTOCOL], { maxPayload: 1 << 20 });
    ws.on('message', (data: Buffer) => {
      bytes += data.length;
      if (want > 0 && bytes >= want) {
        want = 0;
        process.send!('round');
      }
    });
    await once(ws, 'open');
    if (hello) ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    sockets.push(ws);
  }
  process.on('message', (message: { expect: number } | 'exit') => {
    if (message === 'exit') {
      for (const ws of sockets) ws.terminate();
      process.exit(0);
    }
    bytes = 0;
    want = message.expect;
    process.send!('armed');
  });
  process.send!('ready');
}

interface Way {
  name: string;
  /** Bytes one client receives per round (payload plus what the way adds). */
  perClient: number;
  send(round: number): void;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 200);
  const rounds = Number(process.argv[3] ?? 20);
  const payload = Buffer.alloc(PAYLOAD, 0xa5);
  const handler = new WebSocketHandler({
    controlEvents: true,
    binaryFrames: true,
    heartbeatInterval: 0,
    maxBufferedAmount: Infinity,
  });
  const raw = new WebSocketServer({ noServer: true, handleProtocols: () => SUBPROTOCOL });
  let useRaw = false;
  const server = createServer();
  server.on('upgrade', (req, socket, head) => {
    if (useRaw) raw.handleUpgrade(req, socket, head, (ws) => raw.emit('connection', ws));
    else void handler.performHandshake(req, socket, head);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const run = async (
    label: string,
    raw_: boolean,
    ways: (ids: string[]) => Way[],
    core?: Server,
  ): Promise<void> => {
    useRaw = raw_;
    const target = core === undefined ? url : `ws://127.0.0.1:${core.getPort()}/`;
    const child = fork(process.argv[1]!, ['--clients', target, String(count), String(!!core)], {
      stdio: 'inherit',
    });
    const [ready] = (await once(child, 'message')) as [string];
    if (ready !== 'ready') throw new Error('the clients did not start');
    if (core !== undefined) {
      // Every client said $hello: wait until all are open, then put them in the room.
      while (core.getAllClients().length < count) await new Promise((r) => setTimeout(r, 10));
      for (const id of core.getAllClients()) core.joinRoom(id, 'doc');
    }
    const ids = raw_ || core ? [] : [...handler.getClients()].map((c) => c.id);
    for (const way of ways(ids)) {
      const times: number[] = [];
      const cpus: number[] = [];
      for (let r = 0; r <= rounds; r += 1) {
        const armed = once(child, 'message');
        child.send({ expect: count * way.perClient });
        await armed;
        const done = once(child, 'message');
        const start = process.hrtime.bigint();
        const cpu = process.cpuUsage();
        way.send(r + 1);
        await done;
        const used = process.cpuUsage(cpu);
        if (r === 0) continue; // warm-up
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
        cpus.push((used.user + used.system) / 1000);
      }
      times.sort((a, b) => a - b);
      cpus.sort((a, b) => a - b);
      const median = (xs: number[]): string => xs[Math.floor(xs.length / 2)]!.toFixed(1);
      console.log(
        `| ${label}: ${way.name} | ${way.perClient - PAYLOAD} | ${median(times)} | ${median(cpus)} |`,
      );
    }
    child.send('exit');
    await once(child, 'exit');
  };

  console.log(`${count} clients, ${PAYLOAD} B payload, median of ${rounds} rounds\n`);
  console.log(
    '| way | bytes over the payload (frame header) | ms per round | server CPU ms per round |',
  );
  console.log('| --- | ---: | ---: | ---: |');
  const header = encodeBinaryHeader({ event: 'doc.update' }, PAYLOAD);
  const frame = Buffer.from(encodeBinaryFrame({ event: 'doc.update', data: payload }));
  const wsHeader = PAYLOAD + 1 > 65535 ? 10 : 4;
  await run('raw ws', true, () => [
    {
      name: 'shared Buffer',
      perClient: PAYLOAD,
      send: () => {
        for (const ws of raw.clients) ws.send(payload, { binary: true });
      },
    },
    {
      name: 'two fragments',
      perClient: PAYLOAD + header.length + 8,
      send: (round) => {
        for (const ws of raw.clients) {
          ws.send(appendBinarySeq(header, round), { binary: true, fin: false });
          ws.send(payload, { binary: true, fin: true });
        }
      },
    },
  ]);
  await run('WebSocketHandler', false, (ids) => [
    {
      name: 'shared frame (sendBinaryToMany)',
      perClient: frame.length,
      send: () => void handler.sendBinaryToMany(ids, frame),
    },
    {
      name: 'seq per receiver, joined (sendBinary of Buffer.concat)',
      perClient: PAYLOAD + header.length + 8,
      send: (round) => {
        let seq = round * count;
        for (const id of ids) {
          handler.sendBinary(id, Buffer.concat([appendBinarySeq(header, (seq += 1)), payload]));
        }
      },
    },
    {
      name: 'seq per receiver (sendBinary of [header, payload])',
      perClient: PAYLOAD + header.length + 8,
      send: (round) => {
        let seq = round * count;
        for (const id of ids)
          handler.sendBinary(id, [appendBinarySeq(header, (seq += 1)), payload]);
      },
    },
  ]);
  for (const sessions of [true, false]) {
    const core = new Server(
      new ServerConfig({
        host: '127.0.0.1',
        port: 0,
        heartbeat_interval: 0,
        shutdown_timeout: 100,
        ...(sessions ? {} : { recovery_window: 0 }),
      }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    await core.run();
    const coreHeader = encodeBinaryHeader({ event: 'doc.update' }, PAYLOAD).length;
    await run(
      '@pkg/core',
      false,
      () => [
        {
          name: sessions
            ? 'room broadcast, sessions (seq per receiver)'
            : 'room broadcast, no sessions (one frame)',
          perClient: PAYLOAD + coreHeader + (sessions ? 8 : 0),
          send: () => void core.broadcast('doc.update', payload, { room: 'doc' }),
        },
      ],
      core,
    );
    await core.close();
  }
  console.log(`\n(WebSocket frame header per message: ${wsHeader} bytes, not counted above.)`);
  await handler.closeAll(1001, 'done', 100);
  server.close();
}

if (process.argv[2] === '--clients') {
  void clients(process.argv[3]!, Number(process.argv[4]), process.argv[5] === 'true');
} else {
  void main();
}
