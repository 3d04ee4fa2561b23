import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { buildDeployFolder, runNode, startNode, type Started } from './helpers/deploy';
import { TestClient } from './helpers/ws-client';

let dir: string;
let started: Started | undefined;
let client: TestClient | undefined;

beforeAll(() => {
  dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'pkg-demo-deploy-')), 'demo');
  buildDeployFolder(dir);
}, 600_000);

afterAll(async () => {
  await client?.close();
  if (started && started.child.exitCode === null) {
    started.child.kill('SIGKILL');
    await started.exit;
  }
  rmSync(path.dirname(dir), { recursive: true, force: true });
});

describe('deploy folder (pnpm deploy --legacy --prod)', () => {
  it('holds the built demo and only the production @pkg packages it needs', () => {
    expect(existsSync(path.join(dir, 'dist', 'main.js'))).toBe(true);
    // The page script, bundled with @pkg/client at build time; the client itself is not a
    // runtime dependency.
    expect(existsSync(path.join(dir, 'dist', 'public', 'chat.js'))).toBe(true);
    expect(existsSync(path.join(dir, 'src'))).toBe(false);
    expect(readdirSync(path.join(dir, 'node_modules', '@pkg')).sort()).toEqual([
      'admin',
      'core',
      'decorators',
      'redis-adapter',
    ]);
    // The operator page at /admin reads its files from the package's page/ folder.
    expect(existsSync(path.join(dir, 'node_modules', '@pkg', 'admin', 'page', 'index.html'))).toBe(
      true,
    );
    // REDIS_URL makes the demo use the Redis adapter, so its client ships in the folder.
    const fromAdapter = createRequire(
      path.join(dir, 'node_modules', '@pkg', 'redis-adapter', 'package.json'),
    );
    expect(fromAdapter.resolve('redis').startsWith(dir)).toBe(true);
    const core = path.join(dir, 'node_modules', '@pkg', 'core');
    // Published files only (dist, package.json, README): no sources, tests or configs.
    const files = readdirSync(core);
    expect(files).toEqual(expect.arrayContaining(['dist', 'package.json']));
    expect(
      files.filter((f) => !['dist', 'package.json', 'README.md', 'LICENSE'].includes(f)),
    ).toEqual([]);
    expect(existsSync(path.join(dir, 'node_modules', 'playwright-core'))).toBe(false);
  });

  it('starts with plain node, serves /health and a WebSocket round trip, and stops on SIGTERM', async () => {
    started = await startNode(dir, { HOST: '127.0.0.1', PORT: '0' });
    const health = await fetch(`${started.url}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe('healthy');
    const script = await fetch(`${started.url}/chat.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain('emitWithAck(');

    client = await TestClient.connect(`${started.url.replace(/^http/, 'ws')}/?name=deploy`);
    expect((await client.next()).event).toBe('welcome');
    client.send('room.join', { room: 'lobby' });
    await client.waitFor('room.joined');
    client.send('chat.message', { message: 'round trip' });
    expect((await client.waitFor('chat.message')).data).toMatchObject({
      name: 'guest-deploy',
      message: 'round trip',
      room: 'lobby',
    });

    const closed = client.whenClosed();
    started.child.kill('SIGTERM');
    expect(await started.exit).toBe(0);
    expect((await closed).code).toBe(1012);
    expect(started.stdout()).toContain('SIGTERM received; closing connections...');
    expect(started.stdout()).toContain('Demo stopped.');
  }, 60_000);

  it('exits with 1 and a clear message for a bad variable', () => {
    const result = runNode(dir, { PORT: 'eighty' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('PORT must be a whole number from 0 to 65535 (got "eighty")');
  }, 60_000);
});
