/**
 * The AsyncAPI description of the presence events (`$presence`, `$presence_diff`), added to
 * the document when the `presence` setting names rooms. docs/protocol.md has the rules.
 */
import { ControlEvent } from '@pkg/wire';
import type { ControlEventDoc } from '../docs/asyncapi';
import type { Json } from '../docs/json-schema';

const META: Json = {
  type: 'object',
  required: ['clientId', 'joinedAt'],
  properties: {
    clientId: { type: 'string' },
    joinedAt: { type: 'integer', description: 'When the connection joined, ms since the epoch.' },
  },
  additionalProperties: true,
  description: 'One connection; other members are set by the application (presence hook).',
};

const STATE: Json = {
  type: 'object',
  description: 'Entries by presence key (identity, else client id), one meta per connection.',
  additionalProperties: {
    type: 'object',
    required: ['metas'],
    properties: { metas: { type: 'array', items: META } },
  },
};

const ROOM = { room: { type: 'string' }, namespace: { type: 'string' } };

/** The two presence events, keyed by event name. */
export const PRESENCE_EVENT_DOCS: ReadonlyMap<string, ControlEventDoc> = new Map([
  [
    ControlEvent.PRESENCE,
    {
      summary:
        'Protocol version 1: the state of a room with presence, after the client joined it (and again after a resume); `stats` instead of `state` when the room has more keys than presence_max_list.',
      data: {
        type: 'object',
        required: ['room', 'namespace'],
        properties: {
          ...ROOM,
          state: STATE,
          stats: {
            type: 'object',
            required: ['connections', 'keys'],
            properties: { connections: { type: 'integer' }, keys: { type: 'integer' } },
          },
        },
      },
    },
  ],
  [
    ControlEvent.PRESENCE_DIFF,
    {
      summary:
        'Protocol version 1: the joins and leaves of a room with presence since the last $presence or $presence_diff, at most one per presence_interval.',
      data: {
        type: 'object',
        required: ['room', 'namespace', 'joins', 'leaves'],
        properties: { ...ROOM, joins: STATE, leaves: STATE },
      },
    },
  ],
]);
