// `ws_keep_request`: the server holds each client's upgrade request only when asked, since it
// reads the request during the handshake only (about 1.3 KiB less per idle connection).
import { afterEach, describe, expect, it } from '@jest/globals';
import { ServerConfig } from '../src/index';
import { TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

async function requestOfOnlyClient(keep?: boolean): Promise<unknown> {
  const { server, wsUrl } = await startServer(
    [],
    keep === undefined ? {} : { ws_keep_request: keep },
    (s) =>
      s.addHandshakeMiddleware((ctx) => {
        // Handshake middleware sees the request whatever the setting.
        ctx.data['path'] = ctx.request.url ?? '';
      }),
  );
  await TestClient.connect(`${wsUrl}/chat?x=1`);
  const [client] = [...server.clients.values()];
  expect(server.getClientData(client!.id, 'path')).toBe('/chat?x=1');
  return client!.request;
}

describe('ws_keep_request', () => {
  it('drops the upgrade request after the handshake by default', async () => {
    expect(new ServerConfig().getWebSocketKeepRequest()).toBe(false);
    expect(await requestOfOnlyClient()).toBeUndefined();
  });

  it('keeps it on WsClient.request when set', async () => {
    const request = (await requestOfOnlyClient(true)) as { url?: string } | undefined;
    expect(request?.url).toBe('/chat?x=1');
  });

  it('refuses a value that is not a boolean, naming the key', () => {
    expect(() => new ServerConfig({ ws_keep_request: 'yes' as unknown as boolean })).toThrow(
      /"ws_keep_request" must be true or false/,
    );
  });
});
