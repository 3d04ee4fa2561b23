/** The OpenAPI 3.1 document of the registered HTTP routes, built from the registry on demand. */
import type { HttpMethod } from '@pkg/decorators';
import type { ControllerRegistry, RegisteredHttpRoute } from '../routing/controller-registry';
import type { ApiDocumentOptions } from './api-docs';
import {
  ISSUES_SCHEMA,
  schemaFor,
  toJsonSchema,
  type Json,
  type JsonSchemaConverter,
} from './json-schema';

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
