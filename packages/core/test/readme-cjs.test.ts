// The root README's CommonJS example (no decorators), run as written by plain `node` from
// the BUILT package (`require('@pkg/core')` resolves to dist/index.cjs through the package's
// own exports map), then spoken to over HTTP and WebSocket, with PORT=0.
// Needs `pnpm build` first, like CI does.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { TestClient, cleanup } from './helpers';

const root = path.resolve(__dirname, '..', '..', '..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

function example(): string {
  const match = /`server\.cjs`[\s\S]*?```js\n([\s\S]*?)```/m.exec(readme);
  if (match?.[1] === undefined) throw new Error('README.md has no `server.cjs` example block');
  return match[1];
}

// Inside packages/core, so that `@pkg/core` (self-reference) and `zod` (a dev dependency)
// resolve the way they would in an application's node_modules.
const dir = mkdtempSync(path.join(__dirname, '..', '.readme-cjs-'));
const children: ChildProcess[] = [];

afterAll(async () => {
  await cleanup();
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe('README CommonJS example', () => {
  it('runs with plain node from the built package', async () => {
    expect(existsSync(path.join(__dirname, '..', 'dist', 'index.cjs'))).toBe(true);
    const code = example();
    expect(code).toContain("host: '127.0.0.1'");
    const file = path.join(dir, 'server.cjs');
    writeFileSync(file, code);
    const child = spawn(process.execPath, [file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PORT: '0' },
    });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (found?.[1]) resolve(found[1]);
      });
      child.once('exit', (exitCode) => reject(new Error(`exited ${exitCode}: ${stderr}`)));
    });

    const user = await fetch(`${url}/api/users/7`);
    expect([user.status, await user.json()]).toEqual([200, { id: 7 }]);
    const bad = await fetch(`${url}/api/users/0`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'validation_failed' });

    const wsUrl = url.replace('http', 'ws');
    const a = await TestClient.connect(wsUrl);
    const b = await TestClient.connect(wsUrl);
    a.send('chat.message', { text: '  hello  ' });
    expect((await b.next('chat.message')).data).toMatchObject({ text: 'hello' });
    a.send('chat.message', { text: '' });
    expect((await a.next('error')).data).toMatchObject({ code: 'validation_failed' });
    await a.close();
    await b.close();
  });
});
