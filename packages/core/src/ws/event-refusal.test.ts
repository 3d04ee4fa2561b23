import { describe, expect, it } from '@jest/globals';
import { createCoreError } from '../errors';
import { eventErrorOf, refusal } from './event-refusal';

describe('eventErrorOf', () => {
  it('reads the error event of a refusal, and of a core error the client caused', () => {
    expect(eventErrorOf(refusal('forbidden', 'no', { room: 'r' }))).toEqual({
      code: 'forbidden',
      message: 'no',
      data: { room: 'r' },
    });
    expect(
      eventErrorOf(createCoreError(RangeError, 'PKG_ERR_CORE_TOO_MANY_ROOMS', 'full')),
    ).toEqual({ code: 'too_many_rooms', message: 'full', data: {} });
  });

  it('is null for any other failure, and for a code that is not a wire code', () => {
    expect(eventErrorOf(new Error('boom'))).toBeNull();
    expect(eventErrorOf('a string')).toBeNull();
    expect(eventErrorOf(createCoreError(Error, 'PKG_ERR_CORE_BUSY', 'x'))).toBeNull();
    expect(eventErrorOf(Object.assign(new Error('x'), { eventCode: 'Bad Code' }))).toBeNull();
    expect(
      eventErrorOf(Object.assign(new Error('x'), { eventCode: 'ok', eventData: [1] })),
    ).toEqual({ code: 'ok', message: 'x', data: {} });
  });
});
