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

describe('the wire names @pkg/ws-protocol re-exports', () => {
  it('are the very values of @pkg/wire, so the two cannot drift apart', async () => {
    const wire = await import('@pkg/wire');
    expect(wsProtocol.PROTOCOL_V1_SUBPROTOCOL).toBe(wire.SUBPROTOCOL);
    expect(wsProtocol.WsCloseCode).toBe(wire.CloseCode);
    expect(wsProtocol.WsEventErrorCode).toBe(wire.WireErrorCode);
    expect(wsProtocol.isValidRequestId).toBe(wire.isValidRequestId);
  });
});
