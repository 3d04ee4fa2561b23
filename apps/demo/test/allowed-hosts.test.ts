import { request } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { useDemo } from './helpers/app';

const start = useDemo();

/** GET with an explicit Host header (fetch does not let a page or a test choose it). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Host: host, Connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function upgradeWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { Host: host } });
    ws.on('open', () => {
      ws.terminate();
      reject(new Error('the upgrade was accepted'));
    });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('error', () => undefined);
  });
}

describe('DNS rebinding', () => {
  it('refuses HTTP and upgrades for a Host the demo does not serve, on its default loopback address', async () => {
    const { http, ws } = await start();
    expect(await getWithHost(`${http}/api/clients`, 'attacker.example')).toBe(403);
    expect(await upgradeWithHost(`${ws}/`, 'attacker.example')).toBe(403);
    const port = new URL(http).port;
    expect(await getWithHost(`${http}/api/clients`, `localhost:${port}`)).toBe(200);
    expect(await getWithHost(`${http}/api/clients`, `127.0.0.1:${port}`)).toBe(200);
  });
});
