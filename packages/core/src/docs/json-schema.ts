/**
 * JSON Schema for the generated API documents: a route's schema converted by a user's
 * converter, or by the schema library itself (Standard JSON Schema), else a note naming the
 * vendor; and the schemas both documents share.
 */
import type { AnySchema } from '@pkg/decorators';

/** Turns a schema into JSON Schema, or returns undefined to let the next converter try. */
export type JsonSchemaConverter = (schema: AnySchema) => Record<string, unknown> | undefined;

/** A JSON object of a generated document. */
export type Json = Record<string, unknown>;

/** The bounded `issues` list of a `validation_failed` answer. */
export const ISSUES_SCHEMA: Json = {
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

export function schemaFor(schema: AnySchema, converter?: JsonSchemaConverter): Json {
  return toJsonSchema(schema, converter) ?? vendorNote(schema);
}
