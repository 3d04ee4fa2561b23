/**
 * The parts of the AsyncAPI document for room history (docs/protocol.md, "Room history and
 * recovery"): the envelope member `pos`, the `$recovered` control event and the `$history`
 * request and its answer. Added when the server keeps the history of some room.
 */
import { ControlEvent, HISTORY_LIMITS } from '@pkg/wire';
import type { AddMessage, HistoryDocs } from '../docs/asyncapi';
import type { Json } from '../docs/json-schema';

const POSITION: Json = {
  type: 'object',
  required: ['offset', 'epoch'],
  properties: {
    offset: {
      type: 'integer',
      minimum: 0,
      description: 'Publications counted from 1 in the epoch.',
    },
    epoch: {
      type: 'string',
      minLength: 1,
      maxLength: HISTORY_LIMITS.maxEpochLength,
      description: 'Changes when the stream is lost; offsets of two epochs are never compared.',
    },
  },
};

/** `pos`: present on messages broadcast to a room that keeps history. */
export const POS_MEMBER: Json = {
  type: 'object',
  required: ['room', 'namespace', 'epoch', 'offset'],
  description:
    'Only on messages broadcast to a room that keeps history: the position of the message in the room stream. A client remembers the last one per room and sends it back to recover (join_room.since or $hello.positions).',
  properties: {
    room: { type: 'string' },
    namespace: { type: 'string' },
    epoch: (POSITION['properties'] as Record<string, Json>)['epoch']!,
    offset: (POSITION['properties'] as Record<string, Json>)['offset']!,
  },
};

const REASON: Json = {
  type: 'string',
  enum: ['epoch_changed', 'too_far_behind', 'not_kept', 'invalid_position'],
};

const RECOVERED_DATA: Json = {
  type: 'object',
  required: ['room', 'namespace', 'recovered', 'replayed'],
  properties: {
    room: { type: 'string' },
    namespace: { type: 'string' },
    recovered: { type: 'boolean' },
    reason: REASON,
    replayed: { type: 'integer', minimum: 0 },
    position: POSITION,
  },
};

const HISTORY_REQUEST: Json = {
  type: 'object',
  required: ['room'],
  properties: {
    room: { type: 'string' },
    namespace: { type: 'string', default: '/' },
    limit: { type: 'integer', minimum: 1, description: 'Capped by history_max_replay.' },
    since: POSITION,
  },
};

const HISTORY_ANSWER: Json = {
  type: 'object',
  required: ['messages', 'complete'],
  properties: {
    messages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['event', 'data', 'pos'],
        properties: { event: { type: 'string' }, data: {}, pos: POS_MEMBER },
      },
    },
    position: POSITION,
    complete: { type: 'boolean' },
    reason: REASON,
  },
};

/** Adds `$recovered` and both directions of `$history`. */
export function addHistoryMessages(add: AddMessage): void {
  const id = { type: ['string', 'integer'], description: 'Required: the answer carries it.' };
  add(
    'send',
    ControlEvent.RECOVERED,
    {
      type: 'object',
      required: ['event', 'data'],
      properties: { event: { const: ControlEvent.RECOVERED }, data: RECOVERED_DATA },
    },
    'Protocol version 1: the end of one room recovery, after the replayed messages and before live traffic of the room.',
  );
  add(
    'receive',
    ControlEvent.HISTORY,
    {
      type: 'object',
      required: ['event', 'data', 'id'],
      properties: { event: { const: ControlEvent.HISTORY }, data: HISTORY_REQUEST, id },
    },
    'Protocol version 1: the kept messages of a room the client is in (else error forbidden); without id: error invalid_payload.',
  );
  add(
    'send',
    `${ControlEvent.HISTORY}.answer`,
    {
      type: 'object',
      required: ['event', 'data', 'id'],
      properties: { event: { const: ControlEvent.HISTORY }, data: HISTORY_ANSWER, id },
    },
    'The answer to $history, with its id.',
  );
}

/** History's parts of the AsyncAPI document. */
export const HISTORY_DOCS: HistoryDocs = { posMember: POS_MEMBER, addMessages: addHistoryMessages };
