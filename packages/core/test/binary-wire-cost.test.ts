// What bytes cost on the wire (docs/protocol.md, "Binary frames"): a byte-counting TCP
// relay sits between a `ws` client of protocol version 1 and the server and counts every
// byte each way. A 64 KiB payload costs at most 64 KiB + 64 B in either direction (the
// binary frame's header and the WebSocket frame header included), whether sent to one
// client, broadcast with a session's seq (two fragments) or echoed with an id; the echo
// returns equal bytes.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { SocketOn } from '@pkg/decorators';
import { encodeBinaryFrame } from '@pkg/wire';
import { SocketController } from '../src/index';
import { Peer, closePeers, sameBytes, waitFor } from './binary-kit';
import { cleanup, startServer } from './helpers';

const KIB64 = 64 * 1024;

/** A TCP relay to `port` that counts the bytes going each way. */
class CountingRelay {
  toServer = 0;
  toClient = 0;
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();

  private constructor(server: net.Server) {
    this.#server = server;
  }

  static async start(port: number): Promise<CountingRelay> {
    const server = net.createServer();
    const relay = new CountingRelay(server);
    server.on('connection', (client) => {
      const upstream = net.connect(port, '127.0.0.1');
      for (const s of [client, upstream]) {
        relay.#sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => relay.#sockets.delete(s));
      }
      client.on('data', (chunk: Buffer) => {
        relay.toServer += chunk.length;
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        relay.toClient += chunk.length;
        client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.#server.address() as net.AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

class Echo extends SocketController {
  @SocketOn('echo')
  echo(_clientId: string, data: unknown): unknown {
    return data;
  }

  @SocketOn('join')
  join(clientId: string): { ok: true } {
    this.joinRoom(clientId, 'doc');
    return { ok: true };
  }
}

let relay: CountingRelay | undefined;
afterEach(async () => {
  closePeers();
  await relay?.close();
  relay = undefined;
  await cleanup();
});

describe('the wire cost of 64 KiB of bytes', () => {
  it('one send, one broadcast and an echo each cost at most 64 KiB + 64 B, counted on TCP', async () => {
    const { server, wsUrl } = await startServer([new Echo()]);
    relay = await CountingRelay.start(Number(new URL(wsUrl).port));
    const peer = await Peer.connect(relay.url, { v: 1 });
    const clientId = (peer.welcome as { clientId: string }).clientId;
    await peer.request('join', {}, 'j');
    const payload = new Uint8Array(randomBytes(KIB64));

    // Server -> client, one send (its session adds seq to the header).
    let before = relay.toClient;
    expect(server.send(clientId, 'doc.state', payload)).toBe(true);
    await waitFor(() => peer.frames().length === 1);
    const sent = relay.toClient - before;

    // A broadcast: header with seq, then the shared payload, two fragments of one message.
    before = relay.toClient;
    expect(server.broadcast('doc.update', payload, { room: 'doc' })).toBe(1);
    await waitFor(() => peer.frames().length === 2);
    const broadcast = relay.toClient - before;

    // Client -> server and back: an echo with an id returns equal bytes.
    const up = relay.toServer;
    const down = relay.toClient;
    peer.ws.send(encodeBinaryFrame({ event: 'echo', id: 7, data: payload }));
    await waitFor(() => peer.frames().length === 3);
    const request = relay.toServer - up;
    const answer = relay.toClient - down;
    const echo = peer.frames()[2]!;

    expect(peer.frames().map((f) => sameBytes(f.data, payload))).toEqual([true, true, true]);
    expect(echo).toMatchObject({ event: 'echo', id: 7 });
    for (const cost of [sent, broadcast, request, answer]) {
      expect(cost).toBeGreaterThanOrEqual(KIB64);
      expect(cost).toBeLessThanOrEqual(KIB64 + 64);
    }
  });
});
