import { describe, expect, it } from '@jest/globals';
import { ClientError, clientErrorCodes, createClientError } from './errors';

describe('client error codes', () => {
  it('pins the codes and their statuses and close codes', () => {
    expect(Object.keys(clientErrorCodes)).toHaveLength(17);
    for (const [code, info] of Object.entries(clientErrorCodes)) {
      expect(code).toMatch(/^PKG_ERR_CLIENT_[A-Z_]+$/);
      expect(info.message.length).toBeGreaterThan(10);
    }
    expect(clientErrorCodes.PKG_ERR_CLIENT_UNAUTHORIZED).toMatchObject({
      status: 401,
      closeCode: 4401,
    });
    expect(clientErrorCodes.PKG_ERR_CLIENT_FORBIDDEN).toMatchObject({
      status: 403,
      closeCode: 4403,
    });
    expect(clientErrorCodes.PKG_ERR_CLIENT_SESSION_TAKEN_OVER).toMatchObject({ closeCode: 4409 });
    expect(clientErrorCodes.PKG_ERR_CLIENT_SENT_AWAY.message).toMatch(/1000.*1008/);
  });

  it('builds errors that carry the code and details', () => {
    const err = new ClientError('PKG_ERR_CLIENT_UNAUTHORIZED', 'refused', {
      status: 401,
      reason: 'Invalid token',
    });
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({
      code: 'PKG_ERR_CLIENT_UNAUTHORIZED',
      status: 401,
      reason: 'Invalid token',
    });
    const range = createClientError(RangeError, 'PKG_ERR_CLIENT_BUFFER_FULL', 'full');
    expect(range).toBeInstanceOf(RangeError);
    expect(range.code).toBe('PKG_ERR_CLIENT_BUFFER_FULL');
  });
});
