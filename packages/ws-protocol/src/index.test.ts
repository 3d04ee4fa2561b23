import { describe, expect, it } from '@jest/globals';
import * as wsProtocol from './index';

describe('@pkg/ws-protocol entry', () => {
  it('exports exactly its public API (a new export is a deliberate change)', () => {
    expect(Object.keys(wsProtocol).sort()).toEqual([
      'MessageDecodeError',
      'PROTOCOL_V1_SUBPROTOCOL',
      'WebSocketHandler',
      'WsCloseCode',
      'WsEventErrorCode',
      'createClientIdGenerator',
      'guardLogger',
      'isValidRequestId',
      'prepareAnswer',
      'prepareMessage',
      'wsErrorCodes',
      'wsHandlerDefaults',
    ]);
  });
});
