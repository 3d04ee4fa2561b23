// joinRoom against the real @pkg/core Server when the server refuses the join for a reason
// other than its policy: the room cap (`too_many_rooms`), a name it does not accept
// (`invalid_payload`). The promise rejects at once with the server's code and the room, the
// room is forgotten (not joined again after a reconnect), and a refused rejoin is reported.
import { afterEach, describe, expect, it } from '@jest/globals';
import { RoomsController } from '@pkg/core';
import { ClientError, type ServerErrorData } from '../src/index';
import { cleanup, makeClient, next, startCoreServer } from './helpers';

afterEach(cleanup);

// Long enough that a refusal the client did not recognise shows up as a timeout instead.
const ackTimeout = 3000;

async function refusalOf(promise: Promise<void>): Promise<ClientError> {
  const started = Date.now();
  const err = await promise.then(
    () => {
      throw new Error('joinRoom resolved, expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ClientError);
  // Rejected by the server's answer, not by the client's own timer.
  expect(Date.now() - started).toBeLessThan(ackTimeout);
  return err as ClientError;
}

describe('joinRoom refused by the server', () => {
  it('rejects with too_many_rooms, the room and its namespace at max_rooms_per_client', async () => {
    const srv = await startCoreServer(() => [new RoomsController()], undefined, {
      max_rooms_per_client: 1,
    });
    const client = makeClient(srv.url, { ackTimeout });
    const errors: ServerErrorData[] = [];
    client.on('error', (data) => errors.push(data));
    await client.connect();
    await client.joinRoom('first');

    const err = await refusalOf(client.joinRoom('second', '/chat'));
    expect(err).toMatchObject({
      code: 'PKG_ERR_CLIENT_REMOTE',
      remoteCode: 'too_many_rooms',
      event: 'join_room',
      room: 'second',
      namespace: '/chat',
    });
    expect(err.message).toContain('"second"');
    expect(err.message).toContain('too_many_rooms');
    expect(client.rooms()).toEqual([{ room: 'first', namespace: '/' }]);
    expect(srv.server.getNamespaceManager().getClientsInRoom('second', '/chat')).toEqual([]);
    // The answer settled the promise: it is not reported a second time as an `error` event.
    expect(errors).toEqual([]);

    // Twice at once: both promises reject, neither joins.
    const twice = await Promise.all([
      refusalOf(client.joinRoom('third')),
      refusalOf(client.joinRoom('third')),
    ]);
    expect(twice.map((e) => e.remoteCode)).toEqual(['too_many_rooms', 'too_many_rooms']);

    // The refused room is forgotten: after a fresh start only "first" is joined again.
    const rejoined = next(client, 'room_joined');
    await srv.restart();
    expect(await rejoined).toEqual({ room: 'first', namespace: '/' });
    await client.leaveRoom('first');
    await client.joinRoom('second', '/chat');
    expect(client.rooms()).toEqual([{ room: 'second', namespace: '/chat' }]);
  });

  it('rejects a room name with a lone surrogate with invalid_payload and the room', async () => {
    const srv = await startCoreServer(() => [new RoomsController()]);
    const client = makeClient(srv.url, { ackTimeout });
    await client.connect();
    for (const room of ['\uD800', 'lobby\uDC00', '\uDBFFx']) {
      const err = await refusalOf(client.joinRoom(room));
      expect(err).toMatchObject({
        code: 'PKG_ERR_CLIENT_REMOTE',
        remoteCode: 'invalid_payload',
        room,
        namespace: '/',
      });
    }
    expect(client.rooms()).toEqual([]);
    // The connection is still usable.
    await client.joinRoom('lobby');
    expect(client.rooms()).toEqual([{ room: 'lobby', namespace: '/' }]);
  });

  it('rejects as well on a version 0 connection, where the refusal carries no id', async () => {
    const srv = await startCoreServer(() => [new RoomsController()], undefined, {
      max_rooms_per_client: 1,
    });
    const client = makeClient(srv.url, { ackTimeout, protocol: 'basic' });
    await client.connect();
    expect(client.protocol).toBe(0);
    await client.joinRoom('first');
    await expect(refusalOf(client.joinRoom('second'))).resolves.toMatchObject({
      remoteCode: 'too_many_rooms',
      room: 'second',
      namespace: '/',
    });
    await expect(refusalOf(client.joinRoom('\uD800'))).resolves.toMatchObject({
      remoteCode: 'invalid_payload',
      room: '\uD800',
    });
    expect(client.rooms()).toEqual([{ room: 'first', namespace: '/' }]);
  });

  it('reports a rejoin the server refuses after a reconnect as an error event and forgets the room', async () => {
    const config: Record<string, unknown> = { max_rooms_per_client: 2 };
    const srv = await startCoreServer(() => [new RoomsController()], undefined, config);
    const client = makeClient(srv.url, { ackTimeout });
    await client.connect();
    await client.joinRoom('a');
    await client.joinRoom('b');
    // The server comes back with a smaller cap: "a" is joined again, "b" refused.
    config['max_rooms_per_client'] = 1;
    const refused = next<ServerErrorData>(client, 'error');
    await srv.restart();
    expect(await refused).toMatchObject({ code: 'too_many_rooms', room: 'b', namespace: '/' });
    expect(client.rooms()).toEqual([{ room: 'a', namespace: '/' }]);
    expect(srv.server.getNamespaceManager().getClientsInRoom('a')).toEqual([client.id]);
  });
});
