// `json_prototype_keys`: one setting for both protocols. By default a `__proto__` key in JSON
// from the network is refused (HTTP 400, WebSocket `invalid_json`); with 'remove' the key is
// dropped and the request or message goes on to its handler.
import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpRoute, Response, ServerConfig, SocketController, SocketOn } from '../src/index';
import type { EventData, Request } from '../src/index';
import { TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

const POISONED = '{"name":"x","__proto__":{"admin":true}}';

class EchoController extends SocketController {
  @HttpRoute('POST', '/echo')
  echo(request: Request): Response {
    const body = request.getBody() as Record<string, unknown>;
    return Response.json({ keys: Object.keys(body), admin: (body as { admin?: unknown }).admin });
  }

  @SocketOn('echo')
  wsEcho(clientId: string, data: EventData): void {
    const record = data as Record<string, unknown>;
    this.emit(clientId, 'echoed', { keys: Object.keys(record), admin: record['admin'] ?? null });
  }
}

async function post(base: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: POISONED,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('json_prototype_keys', () => {
  it("defaults to 'error' and refuses the key on both protocols", async () => {
    expect(new ServerConfig({}).getJsonPrototypeKeys()).toBe('error');
    const { base, wsUrl } = await startServer([new EchoController()]);
    const answer = await post(base);
    expect(answer.status).toBe(400);
    const client = await TestClient.connect(wsUrl);
    client.sendRaw(`{"event":"echo","data":${POISONED}}`);
    const error = await client.next('error');
    expect((error.data as { code?: unknown }).code).toBe('invalid_json');
    expect(client.pending().filter((e) => e.event === 'echoed')).toEqual([]);
  });

  it("'remove' drops the key and lets both protocols reach the handler", async () => {
    const { base, wsUrl } = await startServer([new EchoController()], {
      json_prototype_keys: 'remove',
    });
    const answer = await post(base);
    expect(answer).toEqual({ status: 200, body: { keys: ['name'] } });
    const client = await TestClient.connect(wsUrl);
    client.sendRaw(`{"event":"echo","data":${POISONED}}`);
    const echoed = await client.next('echoed');
    expect(echoed.data).toEqual({ keys: ['name'], admin: null });
  });

  it('refuses any other value, naming the key', () => {
    expect(() => new ServerConfig({ json_prototype_keys: 'drop' as 'remove' })).toThrow(
      /"json_prototype_keys" must be "error" or "remove"/,
    );
  });
});
