import type { AnySchema } from '@pkg/decorators';
import { Response, type Request } from '@pkg/http';
import type { ControllerRegistry } from '../routing/controller-registry';
import { createCoreError } from '../errors';
import {
  buildAsyncApi,
  checkDeclaredEvent,
  type ControlEventDoc,
  type HistoryDocs,
} from './asyncapi';
import type { Json, JsonSchemaConverter } from './json-schema';
import { buildOpenApi } from './openapi';

export type { JsonSchemaConverter } from './json-schema';

// OpenAPI 3.1 and AsyncAPI 3.0 documents built from the registered routes: paths, events,
// schemas (as JSON Schema when the schema library can export it), rate limits and the
// answers the server gives on its own. Built on demand from the registry, so they never
// disagree with what the server routes.

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

/** The documents of one server: what `server.openapi()` / `asyncapi()` build and serve. */
export class ApiDocs {
  readonly #registry: ControllerRegistry;
  readonly #info: { title: string; version: string };
  readonly #events = new Map<string, ServerEventDeclaration>();
  readonly #controlEvents = new Map<string, ControlEventDoc>();
  #converter: JsonSchemaConverter | undefined;

  readonly #history: () => HistoryDocs | null;

  /** `history` gives history's parts when some room keeps history (the document then shows them). */
  constructor(
    registry: ControllerRegistry,
    info: { title: string; version: string },
    history: () => HistoryDocs | null = () => null,
  ) {
    this.#registry = registry;
    this.#info = info;
    this.#history = history;
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
    return buildAsyncApi(
      this.#registry,
      this.#events,
      this.#info,
      this.#withConverter(options),
      this.#history(),
      this.#controlEvents,
    );
  }

  /** Documents a `$` control event that a feature turned on by the configuration sends. */
  declareControlEvent(event: string, doc: ControlEventDoc): void {
    this.#controlEvents.set(event, doc);
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
      const method = request.getMethod();
      if (method === 'GET' || method === 'HEAD') {
        const path = request.getPath();
        if (path === paths.openapi) return Response.json(this.openapi());
        if (path === paths.asyncapi) return Response.json(this.asyncapi());
      }
      return next(request);
    };
  }
}
