// Odd messages from the server and `history()`, over real sockets against the scripted
// server of test/history-peer.ts: malformed positions and `$recovered`, the kept messages
// typed by the Listen map, refusals, malformed answers, and a request made while away.
import { describe, expect, it } from '@jest/globals';
import { ClientError } from '../src/index';
import { connected, cut, start } from './history-kit';
import { Recorder, makeClient } from './helpers';

describe('odd messages from the server', () => {
  it('delivers a message with a malformed pos as one without, and keeps the last good position', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    peer.publish('r', 'chat.said', { n: 1 });
    const bad = [
      { room: 'r', namespace: '/', epoch: 'x', offset: '2' },
      { room: 'r', namespace: '/', epoch: 'x'.repeat(65), offset: 2 },
      { room: 'r', epoch: 'x', offset: 2 },
      'r:2',
    ];
    bad.forEach((pos, i) =>
      peer.sendRaw(c.id, JSON.stringify({ event: 'chat.said', data: { n: 10 + i }, pos })),
    );
    peer.publish('r', 'chat.said', { n: 2 });
    expect((await c.said.waitFor(6)).map((s) => [s.n, s.offset])).toEqual([
      [1, 1],
      [10, undefined],
      [11, undefined],
      [12, undefined],
      [13, undefined],
      [2, 2],
    ]);
  });

  it('ignores a malformed $recovered, and reports one that nobody asked for', async () => {
    const peer = await start();
    const c = await connected(peer);
    peer.sendRaw(c.id, '{"event":"$recovered","data":{"room":"r","recovered":"yes"}}');
    peer.sendRaw(c.id, '{"event":"$recovered","data":[]}');
    peer.sendRaw(
      c.id,
      '{"event":"$recovered","data":{"room":"q","namespace":"/","recovered":false,"reason":"not_kept","replayed":0}}',
    );
    expect(await c.recovered.waitFor(1)).toEqual([
      { room: 'q', namespace: '/', recovered: false, reason: 'not_kept', replayed: 0 },
    ]);
    // A server event named like a lifecycle event is not delivered to listeners.
    const own = new Recorder<unknown>();
    c.client.on('recovered', own.push);
    peer.sendRaw(c.id, '{"event":"recovered","data":{"room":"q"}}');
    peer.sendRaw(
      c.id,
      '{"event":"$recovered","data":{"room":"z","namespace":"/","recovered":true,"replayed":0}}',
    );
    expect(await own.waitFor(1)).toEqual([
      { room: 'z', namespace: '/', recovered: true, replayed: 0 },
    ]);
  });
});

describe('history()', () => {
  it('resolves with the kept messages, typed and oldest first, and the room position', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    for (let n = 1; n <= 5; n++) peer.publish('r', 'chat.said', { n });
    const epoch = peer.stream('r').epoch;
    const answer = await c.client.history('r', { limit: 2 });
    expect(answer).toEqual({
      messages: [
        {
          event: 'chat.said',
          data: { n: 4 },
          pos: { room: 'r', namespace: '/', epoch, offset: 4 },
        },
        {
          event: 'chat.said',
          data: { n: 5 },
          pos: { room: 'r', namespace: '/', epoch, offset: 5 },
        },
      ],
      position: { offset: 5, epoch },
      complete: false,
    });
    const n: number = answer.messages[0]!.data.n; // typed by the Listen map
    expect(n).toBe(4);
    const request = peer.received.filter((m) => m.event === '$history').pop()!;
    expect(request).toMatchObject({ data: { room: 'r', namespace: '/', limit: 2 } });
    expect(typeof request.id).toBe('number');
    expect((await c.client.history('r')).complete).toBe(true);
  });

  it('rejects with the server code for a room the client is not in', async () => {
    const peer = await start();
    const c = await connected(peer);
    await expect(c.client.history('elsewhere')).rejects.toMatchObject({
      code: 'PKG_ERR_CLIENT_REMOTE',
      remoteCode: 'forbidden',
    });
  });

  it.each([
    ['an empty room', '', {}],
    ['a namespace without "/"', 'r', { namespace: 'chat' }],
    ['a limit of 0', 'r', { limit: 0 }],
    ['a fractional limit', 'r', { limit: 1.5 }],
    ['a since without epoch', 'r', { since: { offset: 1 } }],
    ['a since with a negative offset', 'r', { since: { offset: -1, epoch: 'e' } }],
    ['a timeout of 0', 'r', { timeout: 0 }],
  ])('throws nothing and rejects with a TypeError for %s', async (_case, room, options) => {
    const peer = await start();
    const c = await connected(peer);
    const sent = peer.received.length;
    const result = c.client.history(room, options as never);
    await expect(result).rejects.toBeInstanceOf(TypeError);
    await expect(result).rejects.toMatchObject({ code: 'PKG_ERR_CLIENT_INVALID_ARGUMENT' });
    expect(peer.received.length).toBe(sent);
  });

  it.each([
    ['no messages list', { rows: [] }],
    ['null', null],
    ['a string', 'messages'],
  ])('rejects an answer with %s, saying the server does not keep history', async (_c, data) => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    peer.historyAnswer = data;
    const err = await c.client.history('r').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect(err).toMatchObject({
      code: 'PKG_ERR_CLIENT_REMOTE',
      message: expect.stringMatching(/does not keep history/),
    });
  });

  it('waits for the connection when asked while disconnected, like emitWithAck', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    peer.publish('r', 'chat.said', { n: 1 });
    await c.said.waitFor(1);
    const away = await cut(peer, c);
    const answer = c.client.history('r');
    await away.back();
    expect((await answer).messages.map((m) => m.data)).toEqual([{ n: 1 }]);
  });

  it('rejects with PKG_ERR_CLIENT_REMOTE unsupported against a server of version 0', async () => {
    const peer = await start();
    const client = makeClient(peer.url, { protocol: 'basic' });
    await client.connect();
    const err = await client.history('r').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect(err).toMatchObject({ code: 'PKG_ERR_CLIENT_REMOTE', remoteCode: 'unsupported' });
  });
});
