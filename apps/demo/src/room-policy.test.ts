import { describe, expect, it } from '@jest/globals';
import { DEMO_TOKENS } from './auth';
import { decideRoomJoin } from './room-policy';

const alice = DEMO_TOKENS['alice-token'];
const admin = DEMO_TOKENS['admin-token'];

describe('decideRoomJoin', () => {
  it('lets anyone into ordinary rooms of /', () => {
    expect(decideRoomJoin(undefined, 'lobby', '/')).toEqual({ allowed: true });
    expect(decideRoomJoin(alice, 'team.a-1_b', '/')).toEqual({ allowed: true });
  });

  it('keeps private-* rooms for signed-in users', () => {
    expect(decideRoomJoin(undefined, 'private-x', '/')).toMatchObject({
      allowed: false,
      code: 'forbidden',
    });
    expect(decideRoomJoin(alice, 'private-x', '/')).toEqual({ allowed: true });
  });

  it('keeps /admin for admins and refuses other namespaces', () => {
    expect(decideRoomJoin(alice, 'ops', '/admin')).toMatchObject({
      allowed: false,
      code: 'forbidden',
    });
    expect(decideRoomJoin(admin, 'ops', '/admin')).toEqual({ allowed: true });
    expect(decideRoomJoin(admin, 'ops', '/other')).toMatchObject({
      allowed: false,
      code: 'forbidden',
    });
  });

  it('calls malformed room names invalid_payload', () => {
    for (const room of ['', 'with space', 'x'.repeat(33), 'émoji']) {
      expect(decideRoomJoin(admin, room, '/')).toMatchObject({
        allowed: false,
        code: 'invalid_payload',
      });
    }
  });
});
