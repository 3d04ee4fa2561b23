/**
 * The message heartbeat of protocol version 1, as the server sees it. The server keeps ONE
 * heartbeat of its own: the ping frames of `@pkg/ws-protocol` (`heartbeat_interval`,
 * `heartbeat_timeout`), one timer for every connection, which terminates a peer that does
 * not answer. The `$ping` / `$pong` messages are the client's heartbeat (browsers cannot
 * see ping frames): the server answers each `$ping` at once and grants the values the
 * client asked for in `$hello`, clamped by `readHello` of `@pkg/wire`; it runs no timer for
 * them.
 */
import { ControlEvent, encodeEnvelope } from '@pkg/wire';

/** The answer to `$ping`, serialised once. */
export const PONG = encodeEnvelope(ControlEvent.PONG, {});
