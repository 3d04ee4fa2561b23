// The README's first example, run as written against the real server: it connects, joins
// the lobby through RoomsController and hears its own message.
import { afterEach, describe, expect, it } from '@jest/globals';
import { RoomsController, SocketController, SocketOn } from '@pkg/core';
import { cleanup, startCoreServer } from './helpers';
import { runReadmeExample } from './readme-example';

afterEach(cleanup);

class ChatController extends SocketController {
  @SocketOn('chat.say')
  say(clientId: string, data: unknown): void {
    const { room, text } = data as { room: string; text: string };
    this.broadcast('chat.said', { from: clientId, text }, '/', room);
  }
}

describe('README', () => {
  it('runs the chat example against a server', async () => {
    const { url } = await startCoreServer(() => [new ChatController(), new RoomsController()]);
    await runReadmeExample('chat', url, async (lines, clients) => {
      expect(await lines.waitFor(1)).toEqual(['said: hello']);
      expect(clients[0]!.rooms()).toEqual([{ room: 'lobby', namespace: '/' }]);
    });
  });
});
