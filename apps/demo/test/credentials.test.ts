// The demo's credentials that expire, over real sockets: a demo token traded for a session
// token, a page-like client signing in with it ($welcome.expiresAt) and refreshing it, and an
// admin taking a user out of a room on every connection of theirs.
import { describe, expect, it } from '@jest/globals';
import { useDemo } from './helpers/app';
import { TestClient, type Envelope } from './helpers/ws-client';

const start = useDemo();

async function sessionToken(
  http: string,
  demoToken: string,
): Promise<{ token: string; expiresAt: number }> {
  const res = await fetch(`${http}/api/token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${demoToken}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { token: string; expiresAt: number };
}

async function signIn(ws: string, auth: string): Promise<[TestClient, Envelope]> {
  const client = await TestClient.connect(ws, {}, 'pkg.v1');
  client.send('$hello', { v: 1, auth });
  const welcome = await client.waitFor('$welcome');
  return [client, welcome];
}

describe('session tokens that expire', () => {
  it('POST /api/token issues a token that expires; $hello with it says when, $refresh renews it', async () => {
    const { http, ws } = await start();
    expect((await fetch(`${http}/api/token`, { method: 'POST' })).status).toBe(401);
    const first = await sessionToken(http, 'alice-token');
    expect(first.expiresAt).toBeGreaterThan(Date.now());
    const [client, welcome] = await signIn(ws, first.token);
    expect(welcome.data['expiresAt']).toBe(first.expiresAt);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await sessionToken(http, 'alice-token');
    client.send('$refresh', { auth: second.token }, 'r1');
    const answer = await client.waitFor('$refresh');
    expect(answer).toMatchObject({ id: 'r1', data: { expiresAt: second.expiresAt } });
    // Bob's token cannot refresh Alice's connection.
    const bob = await sessionToken(http, 'bob-token');
    client.send('$refresh', { auth: bob.token }, 'r2');
    const refused = await client.waitFor('error');
    expect(refused).toMatchObject({ id: 'r2', data: { code: 'forbidden', reason: 'identity' } });
  });

  it('a forged or altered session token is refused 4401', async () => {
    const { http, ws } = await start();
    const { token } = await sessionToken(http, 'alice-token');
    const forged = token.replace('s.alice.', 's.admin.');
    const client = await TestClient.connect(ws, {}, 'pkg.v1');
    client.send('$hello', { v: 1, auth: forged });
    expect((await client.waitFor('error')).data['code']).toBe('unauthorized');
  });
});

describe('POST /api/admin/revoke', () => {
  it('admins only; takes the user out of the room on each of their connections', async () => {
    const { http, ws } = await start();
    const post = (token: string | undefined, body: unknown): Promise<globalThis.Response> =>
      fetch(`${http}/api/admin/revoke`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        body: JSON.stringify(body),
      });
    expect((await post(undefined, { user: 'bob', room: 'r' })).status).toBe(401);
    expect((await post('alice-token', { user: 'bob', room: 'r' })).status).toBe(403);
    expect((await post('admin-token', { user: 'bob', room: 'bad room!' })).status).toBe(400);
    const [bob] = await signIn(ws, (await sessionToken(http, 'bob-token')).token);
    bob.send('room.join', { room: 'r' });
    await bob.waitFor('room.joined');
    const res = await post('admin-token', { user: 'bob', room: 'r' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ user: 'bob', room: 'r', revoked: 1 });
    expect((await bob.waitFor('$revoked')).data).toEqual({
      room: 'r',
      namespace: '/',
      reason: 'revoked',
    });
  });
});
