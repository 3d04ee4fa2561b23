/**
 * The one encoder of envelopes (docs/protocol.md, "Envelope members"): every text a server
 * or client puts on the wire is built here, so member names and order live in one place.
 *
 * A message is serialised once (`{"event":…,"data":…}`); the members that differ per
 * receiver or per request (`seq`, `rid`) and the room position a kept message carries
 * (`pos`) are appended to that text without parsing it again. They are appended last, in a
 * fixed order, so a reader can find `pos` from the end.
 */
import type { RequestId, ServerRequestId } from './names';

/** `{"event": event, "data": data}` as one JSON text. Throws what JSON.stringify throws. */
export function encodeEnvelope(event: string, data: unknown): string {
  return JSON.stringify({ event, data });
}

/** A request: `{"event", "data", "id"}` (a client request, answered with the same `id`). */
export function encodeRequest(event: string, data: unknown, id: RequestId): string {
  return JSON.stringify({ event, data, id });
}

/** An answer to a request: `{"event", "id", "data"}`, `data` `null` for undefined. */
export function encodeAnswer(event: string, id: RequestId, data: unknown): string {
  return JSON.stringify({ event, id, data: data === undefined ? null : data });
}

/** An envelope from its event and other members (`data`, `id`, …), in the order given. */
export function encodeMembers(event: string, members: Readonly<Record<string, unknown>>): string {
  return JSON.stringify({ event, ...members });
}

/** Appends `,"name":<json>` to a serialised `{…}` envelope. */
function append(text: string, member: string, json: string): string {
  return `${text.slice(0, -1)},"${member}":${json}}`;
}

/** The envelope with its session sequence number `seq` (protocol version 1). */
export function appendSeq(text: string, seq: number): string {
  return append(text, 'seq', String(seq));
}

/** The envelope as a server request, with its `rid` (protocol version 1). */
export function appendRid(text: string, rid: ServerRequestId | RequestId): string {
  return append(text, 'rid', JSON.stringify(rid));
}

/**
 * A kept message as a template around its room position: `head` + the JSON string of the
 * epoch + `,"offset":` + the offset + `tail` is the envelope with its `pos` member, so a
 * store can fill in the position it assigns without serialising the message again.
 */
export function positionTemplate(
  text: string,
  room: string,
  namespace: string,
): { readonly head: string; readonly tail: string } {
  return {
    head:
      `${text.slice(0, -1)},"pos":{"room":${JSON.stringify(room)}` +
      `,"namespace":${JSON.stringify(namespace)},"epoch":`,
    tail: '}}',
  };
}

/** The `pos` member of a kept envelope built by {@link positionTemplate}, read from its end. */
export function readPositionMember(text: string): unknown {
  const at = text.lastIndexOf(',"pos":{');
  if (at < 0 || !text.endsWith('}}')) return undefined;
  try {
    return JSON.parse(text.slice(at + 7, -1)) as unknown;
  } catch {
    return undefined;
  }
}

/** A {@link positionTemplate} filled in with the position a store assigned. */
export function fillPosition(
  template: { readonly head: string; readonly tail: string },
  epoch: string,
  offset: number,
): string {
  return `${template.head}${JSON.stringify(epoch)},"offset":${offset}${template.tail}`;
}
