import { describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { resolveWebSocket, type WebSocketConstructor } from './transport';

describe('resolveWebSocket', () => {
  it('prefers the given constructor, then the global one, then the ws package', async () => {
    const given = class {} as unknown as WebSocketConstructor;
    expect(await resolveWebSocket(given)).toBe(given);

    const g = globalThis as { WebSocket?: unknown };
    const saved = g.WebSocket;
    const global = class {};
    g.WebSocket = global;
    try {
      expect(await resolveWebSocket()).toBe(global);
    } finally {
      if (saved === undefined) delete g.WebSocket;
      else g.WebSocket = saved;
    }
    if (saved === undefined) expect(await resolveWebSocket()).toBe(WebSocket);
  });
});
