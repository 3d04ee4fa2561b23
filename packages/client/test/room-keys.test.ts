// Rooms whose names hold the characters a key could be joined with: the client keeps
// `/` + `a\u0000b` and `/\u0000a` + `b` apart (joined, left, listed), as the server does.
import { afterEach, describe, expect, it } from '@jest/globals';
import { RoomsController } from '@pkg/core';
import { cleanup, makeClient, startCoreServer } from './helpers';

afterEach(cleanup);

const PAIRS = [
  { room: 'a\u0000b', namespace: '/' },
  { room: 'b', namespace: '/\u0000a' },
  { room: 'a\nb', namespace: '/' },
  { room: 'b', namespace: '/\na' },
];

describe('the client with look-alike rooms', () => {
  it('joins, lists and leaves each pair on its own', async () => {
    const { url } = await startCoreServer(() => [new RoomsController()]);
    const client = makeClient(url);
    await client.connect();
    for (const { room, namespace } of PAIRS) await client.joinRoom(room, namespace);
    const listed = (): unknown[] =>
      client
        .rooms()
        .map((r) => [r.namespace, r.room])
        .sort();
    expect(listed()).toEqual(PAIRS.map((p) => [p.namespace, p.room]).sort());
    await client.leaveRoom('a\u0000b', '/');
    await client.leaveRoom('a\nb', '/');
    expect(listed()).toEqual(
      [
        ['/\na', 'b'],
        ['/\u0000a', 'b'],
      ].sort(),
    );
  });
});
