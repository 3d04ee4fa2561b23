import { afterEach, describe, expect, it } from '@jest/globals';
import { constants, inflateRawSync } from 'node:zlib';
import type { WsClient } from '../src/index';
import { cleanup, collector, rawSocket, startServer, upgradeRequest } from './helpers';

afterEach(cleanup);

interface Frame {
  compressed: boolean;
  opcode: number;
  payload: Buffer;
}

/**
 * A raw client that offers permessage-deflate, so that the test sees the RSV1 bit of every
 * frame the server sends (a `ws` client would inflate them without saying which were
 * compressed).
 */
async function deflateClient(port: number): Promise<{ head: string; next: () => Promise<Frame> }> {
  const socket = await rawSocket(port);
  let buffer = Buffer.alloc(0);
  let head: string | undefined;
  const frames: Frame[] = [];
  const waiters: ((frame: Frame) => void)[] = [];
  let headReady: () => void = () => {};
  const headSeen = new Promise<void>((resolve) => (headReady = resolve));
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    if (head === undefined) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      head = buffer.subarray(0, end).toString('latin1');
      buffer = buffer.subarray(end + 4);
      headReady();
    }
    while (buffer.length >= 2) {
      const length = buffer[1]! & 0x7f;
      const offset = length === 126 ? 4 : 2;
      if (length === 127) throw new Error('frames over 64 KiB are not expected here');
      const size = length === 126 ? buffer.readUInt16BE(2) : length;
      if (buffer.length < offset + size) return;
      const frame = {
        compressed: (buffer[0]! & 0x40) !== 0,
        opcode: buffer[0]! & 0x0f,
        payload: buffer.subarray(offset, offset + size),
      };
      buffer = buffer.subarray(offset + size);
      const waiter = waiters.shift();
      if (waiter) waiter(frame);
      else frames.push(frame);
    }
  });
  socket.write(
    upgradeRequest({ 'Sec-WebSocket-Extensions': 'permessage-deflate; client_max_window_bits' }),
  );
  await headSeen;
  return {
    head: head ?? '',
    next: () => {
      const frame = frames.shift();
      return frame ? Promise.resolve(frame) : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

function text(frame: Frame): string {
  if (!frame.compressed) return frame.payload.toString('utf8');
  const tail = Buffer.from([0x00, 0x00, 0xff, 0xff]);
  return inflateRawSync(Buffer.concat([frame.payload, tail]), {
    finishFlush: constants.Z_SYNC_FLUSH,
  }).toString('utf8');
}

describe('permessage-deflate', () => {
  it('is not negotiated by default, even when the client offers it', async () => {
    const ts = await startServer();
    const client = await deflateClient(ts.port);
    expect(client.head).toMatch(/^HTTP\/1\.1 101 /);
    expect(client.head).not.toMatch(/sec-websocket-extensions/i);
  });

  it('compresses messages from the threshold up, without context takeover', async () => {
    const ts = await startServer({ perMessageDeflate: { threshold: 256 } });
    const clients = collector<WsClient>();
    ts.handler.onConnect(clients.push);
    const client = await deflateClient(ts.port);
    expect(client.head).toMatch(/^HTTP\/1\.1 101 /);
    const extensions = /\r\nSec-WebSocket-Extensions: ([^\r]*)/i.exec(client.head)?.[1] ?? '';
    expect(extensions).toMatch(/^permessage-deflate/);
    expect(extensions).toMatch(/server_no_context_takeover/);
    expect(extensions).toMatch(/client_no_context_takeover/);
    const { id } = await clients.next();

    const small = ts.handler.prepareMessage('small', { text: 'x'.repeat(100) });
    const large = ts.handler.prepareMessage('large', { text: 'x'.repeat(1000) });
    expect(Buffer.byteLength(small)).toBeLessThan(256);
    ts.handler.sendRaw(id, small);
    ts.handler.sendRaw(id, large);

    const first = await client.next();
    expect(first).toMatchObject({ opcode: 0x1, compressed: false });
    expect(text(first)).toBe(small);
    const second = await client.next();
    expect(second).toMatchObject({ opcode: 0x1, compressed: true });
    expect(second.payload.length).toBeLessThan(Buffer.byteLength(large));
    expect(text(second)).toBe(large);
  });
});
