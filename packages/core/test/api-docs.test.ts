// The generated OpenAPI 3.1 and AsyncAPI 3.0 documents, validated with
// @seriousme/openapi-schema-validator and @asyncapi/parser, and served on their configured
// paths over a real socket (off by default). The OpenAPI validator is an ES module only,
// so it runs in a plain node process that reads the document on stdin.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Parser, type AsyncAPIDocumentInterface } from '@asyncapi/parser';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { z } from 'zod';
import {
  HttpRoute,
  RateLimit,
  SocketController,
  SocketOn,
  bytesSchema,
  type AnySchema,
  type JsonSchemaConverter,
  type Request,
} from '../src/index';
import { cleanup, startServer } from './helpers';

afterEach(cleanup);

const Item = z.object({ name: z.string().min(1), tags: z.array(z.string()).optional() });

class DocumentedController extends SocketController {
  @SocketOn('chat.message', { schema: z.object({ text: z.string().max(500) }) })
  chat(): void {}

  @RateLimit(5, 10)
  @SocketOn('user.rename', { schema: v.object({ name: v.pipe(v.string(), v.maxLength(20)) }) })
  rename(): void {}

  @SocketOn('ping')
  ping(): void {}

  @HttpRoute('GET', '/items')
  list() {
    return [];
  }

  @RateLimit(10, 60)
  @HttpRoute('POST', '/items/{id}', {
    params: z.object({ id: z.coerce.number().int() }),
    query: z.object({ dryRun: z.enum(['yes', 'no']).optional() }),
    headers: z.object({ 'x-tenant': z.string() }),
    body: Item,
  })
  save(_request: Request, input: { body: { name: string } }) {
    return { saved: input.body.name };
  }

  @HttpRoute('PUT', '/users/{userId}', { body: v.object({ email: v.pipe(v.string(), v.email()) }) })
  user() {
    return undefined;
  }
}

/** `{ valid, errors, version }` of @seriousme/openapi-schema-validator for the document. */
function validateOpenApi(doc: unknown): { valid: boolean; errors: unknown; version: string } {
  const script =
    "import { Validator } from '@seriousme/openapi-schema-validator';" +
    "let text = ''; process.stdin.on('data', (c) => (text += c));" +
    "process.stdin.on('end', async () => { const v = new Validator();" +
    'const r = await v.validate(JSON.parse(text));' +
    'process.stdout.write(JSON.stringify({ valid: r.valid, errors: r.errors ?? [], version: v.version })); });';
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: path.resolve(__dirname, '..'),
    input: JSON.stringify(doc),
  });
  return JSON.parse(out.toString()) as { valid: boolean; errors: unknown; version: string };
}

const valibotConverter: JsonSchemaConverter = (schema: AnySchema) =>
  schema['~standard'].vendor === 'valibot'
    ? (toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]) as Record<string, unknown>)
    : undefined;

/** `action message` of each operation of a parsed AsyncAPI document, in order. */
function operationsOf(document: AsyncAPIDocumentInterface | undefined): string[] {
  return document!
    .operations()
    .all()
    .map((o) => `${o.action()} ${o.messages().all()[0]!.name()}`);
}

/** The messages of a generated AsyncAPI document, by id. */
function messagesOf(
  doc: Record<string, unknown>,
): Record<string, { payload: Record<string, unknown> }> {
  return (doc['components'] as { messages: Record<string, { payload: Record<string, unknown> }> })
    .messages;
}

async function documented(config = {}) {
  return startServer([new DocumentedController()], config, (server) => {
    server.declareEvent('chat.message', {
      schema: z.object({ from: z.string(), text: z.string() }),
      description: 'A chat line, to everyone.',
    });
    server.setJsonSchemaConverter(valibotConverter);
  });
}

describe('server.openapi()', () => {
  it('is a valid OpenAPI 3.1 document of every route', async () => {
    const { server } = await documented();
    const doc = server.openapi();
    const result = validateOpenApi(doc);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(result.version).toBe('3.1');
    // The validator does refuse a broken document.
    expect(validateOpenApi({ ...doc, info: {} }).valid).toBe(false);

    const paths = doc['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(Object.keys(paths)).toEqual(['/items', '/items/{id}', '/users/{userId}']);
    const save = paths['/items/{id}']!['post']!;
    expect(save['parameters']).toEqual([
      {
        name: 'id',
        in: 'path',
        required: true,
        schema: expect.objectContaining({ type: 'integer' }),
      },
      {
        name: 'dryRun',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: ['yes', 'no'] },
      },
      { name: 'x-tenant', in: 'header', required: true, schema: { type: 'string' } },
    ]);
    expect(save['requestBody']).toMatchObject({
      content: {
        'application/json': {
          schema: { type: 'object', required: ['name'], properties: { name: { minLength: 1 } } },
        },
      },
    });
    expect(save['x-rate-limit']).toEqual({ maxCount: 10, timeWindow: 60, per: 'client IP' });
    expect(Object.keys(save['responses'] as object)).toEqual(['200', '400', '413', '429', '500']);
    // valibot, through the converter hook.
    expect(paths['/users/{userId}']!['put']!['requestBody']).toMatchObject({
      content: { 'application/json': { schema: { properties: { email: { format: 'email' } } } } },
    });
    expect(Object.keys(paths['/items']!['get']!['responses'] as object)).toEqual(['200', '500']);
  });

  it('describes a schema it cannot convert instead of failing', async () => {
    const { server } = await documented();
    server.setJsonSchemaConverter(undefined);
    const put = (
      server.openapi()['paths'] as Record<string, Record<string, Record<string, unknown>>>
    )['/users/{userId}']!['put']!;
    expect(put['requestBody']).toMatchObject({
      content: {
        'application/json': { schema: { description: 'Validated by a valibot schema.' } },
      },
    });
  });
});

describe('server.asyncapi()', () => {
  it('is a valid AsyncAPI 3.0 document of every event, both directions', async () => {
    const { server } = await documented();
    const doc = server.asyncapi();
    const parser = new Parser();
    const { document, diagnostics } = await parser.parse(JSON.stringify(doc));
    expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
    expect(document).toBeDefined();
    // The parser does refuse a broken document.
    const broken = await parser.parse(
      JSON.stringify({ ...doc, operations: { x: { action: 'shout' } } }),
    );
    expect(broken.diagnostics.some((d) => d.severity === 0)).toBe(true);
    expect(operationsOf(document)).toEqual([
      'receive chat.message',
      'receive user.rename',
      'receive ping',
      'send chat.message',
      'send error',
    ]);
    const messages = messagesOf(doc);
    expect(messages['client.chat.message']!.payload).toMatchObject({
      required: ['event', 'data'],
      properties: {
        event: { const: 'chat.message' },
        data: { properties: { text: { maxLength: 500 } } },
        id: {},
      },
    });
    expect(messages['client.user.rename']!.payload).toMatchObject({
      properties: { data: { properties: { name: { maxLength: 20 } } } },
    });
    expect(messages['server.error']!.payload).toMatchObject({
      properties: { data: { required: ['code', 'message'] }, id: {} },
    });
  });
});

describe('server.asyncapi() with a bytes event', () => {
  class UploadController extends SocketController {
    @SocketOn('doc.update', { schema: bytesSchema({ minLength: 1, maxLength: 1024 }) })
    update(): void {}
  }

  it('documents its data as bytes in a binary frame, with their bounds, and stays a valid document', async () => {
    const { server } = await startServer([new UploadController()]);
    const doc = server.asyncapi();
    const { diagnostics } = await new Parser().parse(JSON.stringify(doc));
    expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
    const data = (
      messagesOf(doc)['client.doc.update']!.payload['properties'] as Record<
        string,
        Record<string, unknown>
      >
    )['data']!;
    expect(data['contentMediaType']).toBe('application/octet-stream');
    expect(data['description']).toMatch(/1 to 1024\).*binary frame/);
  });
});

describe('server.asyncapi() with room history', () => {
  it('documents pos on server events, $recovered and $history, and stays a valid document', async () => {
    const { server } = await documented({ history: [{ match: 'chat:*', size: 10, ttl: 1000 }] });
    const doc = server.asyncapi();
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(doc));
    expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
    expect(operationsOf(document)).toEqual([
      'receive chat.message',
      'receive user.rename',
      'receive ping',
      'send chat.message',
      'send $recovered',
      'receive $history',
      'send $history.answer',
      'send error',
    ]);
    const messages = messagesOf(doc);
    expect(messages['server.chat.message']!.payload).toMatchObject({
      properties: { pos: { required: ['room', 'namespace', 'epoch', 'offset'] } },
    });
    expect(messages['server._recovered']!.payload).toMatchObject({
      properties: { data: { required: ['room', 'namespace', 'recovered', 'replayed'] } },
    });
    expect(messages['client._history']!.payload).toMatchObject({
      required: ['event', 'data', 'id'],
    });
    // Without history none of it is there.
    const { server: plain } = await documented();
    expect(JSON.stringify(plain.asyncapi())).not.toMatch(/\$recovered|\$history|"pos"/);
  });
});

describe('serving the documents', () => {
  it('is off by default', async () => {
    const { base } = await documented();
    expect((await fetch(`${base}/openapi.json`)).status).toBe(404);
  });

  it('answers on the configured paths', async () => {
    const { base } = await documented({
      openapi_path: '/openapi.json',
      asyncapi_path: '/asyncapi.json',
      api_title: 'Chat',
      api_version: '2.1.0',
    });
    const openapi = (await (await fetch(`${base}/openapi.json`)).json()) as Record<string, unknown>;
    expect(openapi).toMatchObject({ openapi: '3.1.0', info: { title: 'Chat', version: '2.1.0' } });
    const asyncapi = (await (await fetch(`${base}/asyncapi.json`)).json()) as Record<
      string,
      unknown
    >;
    expect(asyncapi).toMatchObject({ asyncapi: '3.0.0', info: { title: 'Chat' } });
    expect((await fetch(`${base}/openapi.json`, { method: 'POST' })).status).toBe(404);
  });
});
