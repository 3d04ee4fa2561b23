/**
 * The WebSocket subprotocol of protocol version 1 (docs/protocol.md): a client that speaks
 * version 1 offers `pkg.v1` in `Sec-WebSocket-Protocol`, and a server that speaks it selects
 * it, so both sides know before the first message which version the connection uses.
 */

import { SUBPROTOCOL as PROTOCOL_V1_SUBPROTOCOL } from '@pkg/wire';

/** The subprotocol name a version 1 client offers (defined in @pkg/wire). */
export { PROTOCOL_V1_SUBPROTOCOL };

/**
 * Chooses the subprotocol of a handshake from those the client offered (in its order).
 * With `speaksV1`, `pkg.v1` when offered; otherwise, and without `speaksV1`, the first
 * other one offered, as `ws` does on its own; `false` (none) when nothing is left.
 */
export function selectSubprotocol(offered: ReadonlySet<string>, speaksV1: boolean): string | false {
  if (speaksV1 && offered.has(PROTOCOL_V1_SUBPROTOCOL)) return PROTOCOL_V1_SUBPROTOCOL;
  for (const name of offered) {
    if (name !== PROTOCOL_V1_SUBPROTOCOL) return name;
  }
  return false;
}
