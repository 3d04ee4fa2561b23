// Type test: the handler's parameter is typed from its schema. `tsc` type-checks this file
// and every `@ts-expect-error` must stay an error; jest runs it to check that the same
// classes still register (the runtime cannot see types).
import { describe, expect, test } from '@jest/globals';
import * as v from 'valibot';
import { z } from 'zod';
import {
  HttpRoute,
  SocketController,
  SocketOn,
  getControllerMetadataForTest,
} from './schema-types.fixture';
import type { Request } from '../src/index';

const Message = z.object({ text: z.string(), count: z.coerce.number() });
const Name = v.object({ name: v.string() });

class Fine extends SocketController {
  @SocketOn('zod', { schema: Message })
  zod(_clientId: string, data: { text: string; count: number }): void {
    void data.text.toUpperCase();
  }

  @SocketOn('inferred', { schema: Message })
  inferred(_clientId: string, data: z.output<typeof Message>): void {
    void data.count.toFixed();
  }

  @SocketOn('wider', { schema: Name })
  wider(_clientId: string, data: { name: string | number }): void {
    void data;
  }

  @SocketOn('no-data', { schema: Name })
  noData(): void {}

  @HttpRoute('POST', '/items/{id}', { params: z.object({ id: z.coerce.number() }), body: Name })
  create(_request: Request, input: { params: { id: number }; body: { name: string } }) {
    return { id: input.params.id, name: input.body.name };
  }

  @HttpRoute('GET', '/plain')
  plain(_request: Request, input: { query: Record<string, unknown> }) {
    return { query: input.query };
  }
}

class Wrong extends SocketController {
  // @ts-expect-error -- the schema outputs count as a number, not a string
  @SocketOn('a', { schema: Message })
  wrongField(_clientId: string, _data: { text: string; count: string }): void {}

  // @ts-expect-error -- the handler needs a field the schema does not produce
  @SocketOn('b', { schema: Name })
  extraField(_clientId: string, _data: { name: string; age: number }): void {}

  // @ts-expect-error -- the params schema outputs a number id
  @HttpRoute('GET', '/c/{id}', { params: z.object({ id: z.coerce.number() }) })
  wrongParams(_request: Request, _input: { params: { id: string } }) {
    return {};
  }

  // @ts-expect-error -- the body schema (valibot) has no "age"
  @HttpRoute('POST', '/d', { body: Name })
  wrongBody(_request: Request, _input: { body: { age: number } }) {
    return {};
  }

  // @ts-expect-error -- a route returns a Response, an object, or nothing; not a number
  @HttpRoute('GET', '/e')
  returnsNumber(): number {
    return 1;
  }
}

describe('schema-typed handlers', () => {
  test('well-typed and ill-typed handlers alike are recorded at run time', () => {
    expect(getControllerMetadataForTest(Fine)).toEqual({ ws: 4, http: 2 });
    expect(getControllerMetadataForTest(Wrong)).toEqual({ ws: 2, http: 3 });
  });
});
