/**
 * A Standard Schema for the bytes of a binary message (protocol version 1): `SocketOn`'s
 * `schema` option takes it like any other schema, so a handler can bound the byte length
 * of what it accepts. A message that is not bytes (a JSON one), or whose length is out of
 * bounds, is refused with `validation_failed` before the handler runs.
 *
 *     @SocketOn('doc.update', { schema: bytesSchema({ maxLength: 256 * 1024 }) })
 *     update(clientId: string, data: Uint8Array) { ... }
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { createCoreError } from '../errors';

/** Options of {@link bytesSchema}: bounds of the byte length, inclusive. */
export interface BytesSchemaOptions {
  /** Fewest bytes accepted. Default 0. */
  readonly minLength?: number;
  /** Most bytes accepted. Default: no bound beyond `max_message_size`. */
  readonly maxLength?: number;
}

function checkBound(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      `bytesSchema: ${name} must be a whole number of bytes from 0, got ${String(value)}.`,
    );
  }
  return value;
}

/**
 * A schema that accepts a `Uint8Array` (a binary message's data) of `minLength` to
 * `maxLength` bytes and passes it on unchanged. Throws a TypeError for a bad bound.
 */
export function bytesSchema(
  options: BytesSchemaOptions = {},
): StandardSchemaV1<Uint8Array, Uint8Array> {
  const min = checkBound('minLength', options.minLength) ?? 0;
  const max = checkBound('maxLength', options.maxLength);
  if (max !== undefined && max < min) {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      `bytesSchema: maxLength (${max}) is below minLength (${min}).`,
    );
  }
  const fail = (message: string): StandardSchemaV1.FailureResult => ({ issues: [{ message }] });
  return {
    '~standard': {
      version: 1,
      vendor: 'pkg',
      validate(value: unknown) {
        if (!(value instanceof Uint8Array)) {
          return fail('Expected bytes: send this event as a binary frame (protocol version 1).');
        }
        if (value.length < min) return fail(`Expected at least ${min} bytes, got ${value.length}.`);
        if (max !== undefined && value.length > max) {
          return fail(`Expected at most ${max} bytes, got ${value.length}.`);
        }
        return { value };
      },
    },
  };
}
