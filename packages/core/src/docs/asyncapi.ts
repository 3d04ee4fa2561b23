/** The AsyncAPI 3.0 document of the WebSocket events, both directions, built on demand. */
import { isValidEventName } from '@pkg/wire';
import { createCoreError } from '../errors';
import type { ControllerRegistry } from '../routing/controller-registry';
import type { ApiDocumentOptions, ServerEventDeclaration } from './api-docs';
import { ISSUES_SCHEMA, schemaFor, type Json } from './json-schema';

function envelope(event: string, data: Json, withId: boolean): Json {
  const properties: Json = { event: { const: event }, data };
  if (withId) {
    properties['id'] = {
      type: ['string', 'integer'],
      description:
        'Optional. When present, the answer (result or error event) carries the same id.',
    };
  }
  return { type: 'object', required: ['event', 'data'], properties };
}

function messageKey(event: string): string {
  return event.replace(/[^A-Za-z0-9_.-]/g, '_');
}

const ERROR_DATA: Json = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: {
      type: 'string',
      description:
        'unknown_event, rate_limited, validation_failed, internal_error, invalid_payload, forbidden, ...',
    },
    message: { type: 'string' },
    event: { type: 'string' },
    retryAfter: { type: 'integer' },
    issues: ISSUES_SCHEMA,
  },
};

/** Adds one message of one direction to the document. */
export type AddMessage = (
  direction: 'receive' | 'send',
  event: string,
  payload: Json,
  summary: string,
) => void;

/**
 * The parts of room history in the document, given by history/ when some room keeps
 * history: the member every server event may carry, and its control events.
 */
export interface HistoryDocs {
  /** `pos`, on server events broadcast to a room that keeps history. */
  readonly posMember: Json;
  addMessages(add: AddMessage): void;
}

/** A `$` control event the server sends when a feature is on (its data as JSON Schema). */
export interface ControlEventDoc {
  readonly data: Json;
  readonly summary: string;
}

/** The AsyncAPI 3.0 document of every WebSocket event, both directions. */
export function buildAsyncApi(
  registry: ControllerRegistry,
  serverEvents: ReadonlyMap<string, ServerEventDeclaration>,
  info: { title: string; version: string },
  options: ApiDocumentOptions = {},
  history: HistoryDocs | null = null,
  controlEvents: ReadonlyMap<string, ControlEventDoc> = new Map(),
): Json {
  const messages: Record<string, Json> = {};
  const operations: Record<string, Json> = {};
  const channelMessages: Record<string, Json> = {};
  const add: AddMessage = (direction, event, payload, summary) => {
    const key = `${direction === 'receive' ? 'client' : 'server'}.${messageKey(event)}`;
    messages[key] = { name: event, summary, payload };
    channelMessages[key] = { $ref: `#/components/messages/${key}` };
    operations[`${direction}.${messageKey(event)}`] = {
      action: direction,
      channel: { $ref: '#/channels/socket' },
      messages: [{ $ref: `#/channels/socket/messages/${key}` }],
    };
  };
  for (const route of registry.wsRoutes.values()) {
    const data = route.schema
      ? schemaFor(route.schema, options.jsonSchema)
      : { type: ['object', 'array'] };
    const limit = route.rateLimit
      ? ` Rate limit: ${route.rateLimit.maxCount} per ${route.rateLimit.timeWindow} s per client (then error rate_limited).`
      : '';
    const checked = route.schema ? ' Invalid data is answered with error validation_failed.' : '';
    add(
      'receive',
      route.event,
      envelope(route.event, data, true),
      `Sent by clients.${checked}${limit}`,
    );
  }
  for (const [event, declared] of serverEvents) {
    const data = declared.schema
      ? schemaFor(declared.schema, options.jsonSchema)
      : { type: ['object', 'array'] };
    const payload = envelope(event, data, false);
    if (history !== null)
      (payload['properties'] as Record<string, Json>)['pos'] = history.posMember;
    add('send', event, payload, declared.description ?? 'Sent by the server.');
  }
  history?.addMessages(add);
  for (const [event, doc] of controlEvents) {
    add('send', event, envelope(event, doc.data, false), doc.summary);
  }
  if (!serverEvents.has('error')) {
    add(
      'send',
      'error',
      envelope('error', ERROR_DATA, true),
      'Sent by the server when a message fails (with the id of the message when it had one); the connection stays open.',
    );
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: options.title ?? info.title,
      version: options.version ?? info.version,
      description:
        'Generated from the registered events. Every message is a JSON text frame ' +
        '{"event", "data", "id"?}; data is an object or an array.',
    },
    defaultContentType: 'application/json',
    channels: { socket: { address: '/', messages: channelMessages } },
    operations,
    components: { messages },
  };
}

/** Checks an event name given to `declareEvent`. */
export function checkDeclaredEvent(event: unknown): string {
  if (!isValidEventName(event)) {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      `declareEvent: the event name must be letters, digits, ".", "_" or "-", got ${JSON.stringify(event)}.`,
    );
  }
  return event;
}
