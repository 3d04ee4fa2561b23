// The README's first example, run as written against the real server: it connects, joins
// the lobby through RoomsController and hears its own message.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import { RoomsController, SocketController, SocketOn } from '@pkg/core';
import * as pkg from '../src/index';
import { Recorder, cleanup, startCoreServer } from './helpers';

afterEach(cleanup);

class ChatController extends SocketController {
  @SocketOn('chat.say')
  say(clientId: string, data: unknown): void {
    const { room, text } = data as { room: string; text: string };
    this.broadcast('chat.said', { from: clientId, text }, '/', room);
  }
}

function example(): string {
  const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const match = /<!-- example: chat -->\s*```ts\n([\s\S]*?)```/.exec(readme);
  if (match?.[1] === undefined) throw new Error('README.md has no chat example block');
  return match[1];
}

describe('README', () => {
  it('runs the chat example against a server', async () => {
    const { url } = await startCoreServer(() => [new ChatController(), new RoomsController()]);
    const js = ts.transpileModule(example(), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const lines = new Recorder<string>();
    const clients: pkg.Client[] = [];
    const modules: Record<string, unknown> = {
      '@pkg/client': {
        ...pkg,
        Client: class extends pkg.Client {
          constructor(...args: ConstructorParameters<typeof pkg.Client>) {
            super(...args);
            clients.push(this);
          }
        },
      },
    };
    const fakeRequire = (id: string): unknown => {
      if (id in modules) return modules[id];
      throw new Error(`the example requires ${id}, which the test does not provide`);
    };
    const fakeProcess = { ...process, env: { ...process.env, SERVER_URL: url } };
    const run = new Function(
      'require',
      'exports',
      'process',
      'console',
      `return (async () => {\n${js}\n})();`,
    ) as (...args: unknown[]) => Promise<void>;
    try {
      await run(fakeRequire, {}, fakeProcess, { log: lines.push });
      expect(await lines.waitFor(1)).toEqual(['said: hello']);
      expect(clients[0]!.rooms()).toEqual([{ room: 'lobby', namespace: '/' }]);
    } finally {
      for (const c of clients) c.disconnect();
    }
  });
});
