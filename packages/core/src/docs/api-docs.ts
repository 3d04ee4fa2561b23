import type { AnySchema, HttpMethod } from '@pkg/decorators';
import { Response, type Request } from '@pkg/http';
import type { ControllerRegistry, RegisteredHttpRoute } from '../routing/controller-registry';
import { createCoreError } from '../errors';

// OpenAPI 3.1 and AsyncAPI 3.0 documents built from the registered routes: paths, events,
// schemas (as JSON Schema when the schema library can export it), rate limits and the
// answers the server gives on its own. Built on demand from the registry, so they never
// disagree with what the server routes.

/** Turns a schema into JSON Schema, or returns undefined to let the next converter try. */
export type JsonSchemaConverter = (schema: AnySchema) => Record<string, unknown> | undefined;

/** Title and version of the generated documents, and an optional converter. */
export interface ApiDocumentOptions {
  /** `info.title`. Default from the `api_title` config key. */
  title?: string;
  /** `info.version`. Default from the `api_version` config key. */
  version?: string;
  /**
   * Converts schemas the library cannot convert by itself (those without the Standard JSON
   * Schema interface, e.g. valibot with `@valibot/to-json-schema`). Tried first.
   */
  jsonSchema?: JsonSchemaConverter;
}

/** An event the server sends, declared with `server.declareEvent` for the AsyncAPI document. */
export interface ServerEventDeclaration {
  /** The schema of the event's `data`. */
  schema?: AnySchema;
  /** One line for the document. */
  description?: string;
}

type Json = Record<string, unknown>;

const ISSUES_SCHEMA: Json = {
  type: 'array',
  maxItems: 20,
  items: {
    type: 'object',
    required: ['path', 'message'],
    properties: {
      path: { type: 'array', items: { type: ['string', 'integer'] } },
      message: { type: 'string', maxLength: 200 },
    },
  },
};

/** The JSON Schema of a Standard Schema, or undefined when nothing can export it. */
export function toJsonSchema(schema: AnySchema, converter?: JsonSchemaConverter): Json | undefined {
  try {
    const custom = converter?.(schema);
    if (custom !== undefined) return stripDialect(custom);
    const standard = (schema as { '~standard': { jsonSchema?: { input?: unknown } } })['~standard'];
    const input = standard.jsonSchema?.input;
    if (typeof input === 'function') {
      return stripDialect(
        (input as (o: { target: string }) => Json).call(standard.jsonSchema, {
          target: 'draft-2020-12',
        }),
      );
    }
  } catch {
    // A schema the converter cannot express (a custom refinement...): documented without it.
  }
  return undefined;
}

function stripDialect(schema: Json): Json {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

function vendorNote(schema: AnySchema): Json {
  return { description: `Validated by a ${schema['~standard'].vendor} schema.` };
}

function schemaFor(schema: AnySchema, converter?: JsonSchemaConverter): Json {
  return toJsonSchema(schema, converter) ?? vendorNote(schema);
}

function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([^}/]+)\}/g)].map((m) => m[1]!);
}

/** Query or header parameters from an object JSON Schema's properties. */
function parametersFrom(where: 'query' | 'header', schema: Json | undefined): Json[] {
  const properties = schema?.['properties'];
  if (typeof properties !== 'object' || properties === null) return [];
  const required = Array.isArray(schema?.['required']) ? (schema['required'] as string[]) : [];
  return Object.entries(properties as Record<string, Json>).map(([name, property]) => ({
    name,
    in: where,
    required: required.includes(name),
    schema: property,
  }));
}

/** The JSON body of the answers the server gives on its own. */
const ERROR_BODY: Json = {
  'application/json': { schema: { $ref: '#/components/schemas/Error' } },
};

const ERROR_RESPONSES: Record<string, Json> = {
  BadRequest: {
    description:
      'The input failed the route schemas (`validation_failed`), or the body is malformed.',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ValidationError' } } },
  },
  NotFound: {
    description: 'No route has the path (answered by the server).',
    content: ERROR_BODY,
  },
  MethodNotAllowed: {
    description: 'The path exists under other methods; `Allow` lists them.',
    headers: { Allow: { schema: { type: 'string' } } },
    content: ERROR_BODY,
  },
  PayloadTooLarge: {
    description: 'The body is larger than `max_body_size`.',
    content: ERROR_BODY,
  },
  TooManyRequests: {
    description: 'Over the rate limit of the route (`x-rate-limit`); see `Retry-After`.',
    headers: {
      'Retry-After': { schema: { type: 'integer' } },
      'X-RateLimit-Limit': { schema: { type: 'integer' } },
      'X-RateLimit-Remaining': { schema: { type: 'integer' } },
      'X-RateLimit-Reset': { schema: { type: 'integer' } },
    },
    content: ERROR_BODY,
  },
  InternalServerError: {
    description: 'The handler failed (details only in debug mode).',
    content: ERROR_BODY,
  },
};

function operationOf(route: RegisteredHttpRoute, converter?: JsonSchemaConverter): Json {
  const schemas = route.schemas ?? {};
  const params = schemas.params ? toJsonSchema(schemas.params, converter) : undefined;
  const paramProps = (params?.['properties'] ?? {}) as Record<string, Json>;
  const parameters: Json[] = pathParams(route.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: paramProps[name] ?? { type: 'string' },
  }));
  if (schemas.query) {
    parameters.push(...parametersFrom('query', toJsonSchema(schemas.query, converter)));
  }
  if (schemas.headers) {
    parameters.push(...parametersFrom('header', toJsonSchema(schemas.headers, converter)));
  }
  const responses: Json = {
    '200': { description: 'The handler answer (a 204 when it returns nothing).' },
  };
  const hasSchemas = Object.keys(schemas).length > 0;
  if (hasSchemas || ['POST', 'PUT', 'PATCH'].includes(route.method)) {
    responses['400'] = { $ref: '#/components/responses/BadRequest' };
  }
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method)) {
    responses['413'] = { $ref: '#/components/responses/PayloadTooLarge' };
  }
  if (route.rateLimit) responses['429'] = { $ref: '#/components/responses/TooManyRequests' };
  responses['500'] = { $ref: '#/components/responses/InternalServerError' };
  const handler = typeof route.handler === 'symbol' ? route.handler.toString() : route.handler;
  const operation: Json = {
    operationId: `${route.controller.constructor.name}.${handler}`.replace(/[^A-Za-z0-9_.-]/g, '_'),
    responses,
  };
  if (parameters.length > 0) operation['parameters'] = parameters;
  if (schemas.body) {
    operation['requestBody'] = {
      required: true,
      content: { 'application/json': { schema: schemaFor(schemas.body, converter) } },
    };
  }
  if (route.rateLimit) {
    operation['x-rate-limit'] = {
      maxCount: route.rateLimit.maxCount,
      timeWindow: route.rateLimit.timeWindow,
      per: 'client IP',
    };
  }
  return operation;
}

/** The OpenAPI 3.1 document of every HTTP route. */
export function buildOpenApi(
  registry: ControllerRegistry,
  info: { title: string; version: string },
  options: ApiDocumentOptions = {},
): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const seen = new Set<string>();
  for (const route of registry.httpRoutes) {
    const method = route.method.toLowerCase() as Lowercase<HttpMethod>;
    const item = (paths[route.path] ??= {});
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    item[method] = operationOf(route, options.jsonSchema);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: options.title ?? info.title,
      version: options.version ?? info.version,
      description:
        'Generated from the registered routes. Every path may also answer 404 (no route), ' +
        '405 (other methods; see Allow) and 503 (shutting down). `x-rate-limit` gives ' +
        '`maxCount` requests per `timeWindow` seconds per client IP.',
    },
    paths,
    components: {
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'string' }, code: { type: 'string' } },
        },
        ValidationError: {
          type: 'object',
          required: ['error', 'code', 'issues'],
          properties: {
            error: { const: 'Bad Request' },
            code: { const: 'validation_failed' },
            issues: ISSUES_SCHEMA,
          },
        },
      },
      responses: ERROR_RESPONSES,
    },
  };
}

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

/** The AsyncAPI 3.0 document of every WebSocket event, both directions. */
export function buildAsyncApi(
  registry: ControllerRegistry,
  serverEvents: ReadonlyMap<string, ServerEventDeclaration>,
  info: { title: string; version: string },
  options: ApiDocumentOptions = {},
): Json {
  const messages: Record<string, Json> = {};
  const operations: Record<string, Json> = {};
  const channelMessages: Record<string, Json> = {};
  const add = (direction: 'receive' | 'send', event: string, payload: Json, summary: string) => {
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
    add('send', event, envelope(event, data, false), declared.description ?? 'Sent by the server.');
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
  if (typeof event !== 'string' || !/^[A-Za-z0-9._-]+$/.test(event)) {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      `declareEvent: the event name must be letters, digits, ".", "_" or "-", got ${JSON.stringify(event)}.`,
    );
  }
  return event;
}

/** The documents of one server: what `server.openapi()` / `asyncapi()` build and serve. */
export class ApiDocs {
  readonly #registry: ControllerRegistry;
  readonly #info: { title: string; version: string };
  readonly #events = new Map<string, ServerEventDeclaration>();
  #converter: JsonSchemaConverter | undefined;

  constructor(registry: ControllerRegistry, info: { title: string; version: string }) {
    this.#registry = registry;
    this.#info = info;
  }

  declareEvent(event: string, declaration: ServerEventDeclaration = {}): void {
    this.#events.set(checkDeclaredEvent(event), { ...declaration });
  }

  /** The converter used when a call passes none (and by the served documents). */
  setJsonSchemaConverter(converter: JsonSchemaConverter | undefined): void {
    if (converter !== undefined && typeof converter !== 'function') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'setJsonSchemaConverter: expected a function (schema) => JSON Schema object or undefined.',
      );
    }
    this.#converter = converter;
  }

  openapi(options: ApiDocumentOptions = {}): Json {
    return buildOpenApi(this.#registry, this.#info, this.#withConverter(options));
  }

  asyncapi(options: ApiDocumentOptions = {}): Json {
    return buildAsyncApi(this.#registry, this.#events, this.#info, this.#withConverter(options));
  }

  #withConverter(options: ApiDocumentOptions): ApiDocumentOptions {
    if (options.jsonSchema !== undefined || this.#converter === undefined) return options;
    return { ...options, jsonSchema: this.#converter };
  }

  /**
   * A step before routing that answers GET/HEAD on the configured paths with the documents
   * (before middleware, like the health check); `next` itself when both paths are null.
   */
  serve(
    paths: { openapi: string | null; asyncapi: string | null },
    next: (request: Request) => Response | Promise<Response>,
  ): (request: Request) => Response | Promise<Response> {
    if (paths.openapi === null && paths.asyncapi === null) return next;
    return (request) => {
      const method = request.getMethod().toUpperCase();
      if (method === 'GET' || method === 'HEAD') {
        const path = request.getPath();
        if (path === paths.openapi) return Response.json(this.openapi());
        if (path === paths.asyncapi) return Response.json(this.asyncapi());
      }
      return next(request);
    };
  }
}
