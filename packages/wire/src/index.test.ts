import { describe, expect, it } from '@jest/globals';
import * as wire from './index';

describe('@pkg/wire entry', () => {
  it('exports exactly its public API (a new export is a deliberate change)', () => {
    expect(Object.keys(wire).sort()).toEqual([
      'CLIENT_CONTROL_EVENTS',
      'CloseCode',
      'ControlEvent',
      'EVENT_NAME_PATTERN',
      'HEARTBEAT_LIMITS',
      'HISTORY_LIMITS',
      'MAX_AUTH_LENGTH',
      'MAX_CLOSE_REASON_BYTES',
      'MAX_ID_LENGTH',
      'MAX_SESSION_LENGTH',
      'PROTOCOL_VERSION',
      'SUBPROTOCOL',
      'WireErrorCode',
      'closeCodeInfo',
      'closeCodes',
      'encodeError',
      'fitCloseReason',
      'isEventData',
      'isSendableCloseCode',
      'isValidEventName',
      'isValidRequestId',
      'isValidSeq',
      'isValidServerRequestId',
      'isWellFormedName',
      'readErrorData',
      'readHello',
      'readPresenceData',
      'readPresenceDiff',
      'readPresenceMeta',
      'readPresenceState',
      'readPresenceStats',
      'readWelcome',
      'reconnectsAfter',
      'utf8Length',
    ]);
  });
});
