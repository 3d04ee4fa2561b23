// What the conformance test of docs/protocol.md needs beside the shared helpers: the codes
// its tests exercised, expectations that record them, a version 1 handshake done with
// plain frames, and a reader of the document's tables (so a new row without a test fails).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from '@jest/globals';
import { TestClient, type Envelope } from './helpers';

/** A received envelope with the optional members of version 1. */
export interface Message extends Envelope {
  id?: unknown;
  rid?: unknown;
  seq?: unknown;
}

/** Every `error` code and close code some test of the file asserted. */
export const exercised = { errorCodes: new Set<string>(), closeCodes: new Set<number>() };

/** How long a test waits for a frame it expects before failing with a clear message. */
export const WAIT_MS = 5000;

/** Rejects with a message naming what was awaited when `promise` takes longer than `ms`. */
export function within<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Nothing within ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The next envelope of `event` (any event when omitted), within WAIT_MS. */
export function next(client: TestClient, event?: string, ms = WAIT_MS): Promise<Message> {
  return within(client.next(event) as Promise<Message>, `a "${event ?? 'any'}" message`, ms);
}

/**
 * The next `error` event: asserts its code and that it has a non-empty message, plus the
 * given members (`id`, extra data fields). Records the code as exercised.
 */
export async function expectError(
  client: TestClient,
  code: string,
  members: { id?: unknown; data?: Record<string, unknown> } = {},
): Promise<Message> {
  exercised.errorCodes.add(code);
  const error = await next(client, 'error');
  expect(error.data['code']).toBe(code);
  expect(typeof error.data['message']).toBe('string');
  expect((error.data['message'] as string).length).toBeGreaterThan(0);
  if ('id' in members) expect(error.id).toEqual(members.id);
  else expect(error).not.toHaveProperty('id');
  if (members.data) expect(error.data).toMatchObject(members.data);
  return error;
}

/** The close code the client saw (and the reason): asserts `code`, records it. */
export async function expectClose(
  client: TestClient,
  code: number,
  ms = WAIT_MS,
): Promise<{ code: number; reason: string }> {
  exercised.closeCodes.add(code);
  const closed = await within(client.closed, `a close with ${code}`, ms);
  expect(closed.code).toBe(code);
  return closed;
}

/** Resolves once `predicate` holds (polled every 5 ms), or fails after `ms`. */
export async function until(predicate: () => boolean, what: string, ms = WAIT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(5);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Sends any JSON value as one text frame. */
export const sendJson = (client: TestClient, value: unknown): void =>
  client.sendRaw(JSON.stringify(value));

/** A request: an envelope with `id`. */
export const request = (client: TestClient, event: string, data: unknown, id: unknown): void =>
  sendJson(client, { event, data, id });

/** Connects offering the subprotocol `pkg.v1` (and `others` before it). */
export const connectV1 = (url: string, others: string[] = []): Promise<TestClient> =>
  TestClient.connect(url, {}, [...others, 'pkg.v1']);

/** Connects offering `pkg.v1`, sends `$hello` with `data`, and waits for `$welcome`. */
export async function hello(
  url: string,
  data: Record<string, unknown> = { v: 1 },
): Promise<{ client: TestClient; welcome: Record<string, unknown> }> {
  const client = await connectV1(url);
  sendJson(client, { event: '$hello', data });
  const first = await next(client);
  expect(first.event).toBe('$welcome');
  return { client, welcome: first.data };
}

// ------------------------------------------------------------------ the document's tables

export const PROTOCOL_DOC = path.resolve(__dirname, '..', '..', '..', 'docs', 'protocol.md');

interface Table {
  header: string[];
  rows: string[][];
}

const cells = (line: string): string[] =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());

/** Every Markdown table of the document, outside code blocks. */
export function documentTables(text = readFileSync(PROTOCOL_DOC, 'utf8')): Table[] {
  const tables: Table[] = [];
  let fenced = false;
  let current: string[] = [];
  const flush = (): void => {
    if (current.length >= 2 && /^\|?\s*:?-{3,}/.test(current[1]!.trim())) {
      tables.push({ header: cells(current[0]!), rows: current.slice(2).map(cells) });
    }
    current = [];
  };
  for (const line of text.split('\n')) {
    if (line.trim().startsWith('```')) fenced = !fenced;
    if (!fenced && line.trim().startsWith('|')) current.push(line);
    else flush();
  }
  flush();
  return tables;
}

const unquote = (cell: string): string => cell.replace(/`/g, '').trim();

const CODE_HEADERS = new Set(['data.code', 'code', 'error code', 'close code']);

/** The first-column cells of every table whose first column is headed `data.code` or `code`. */
function codeCells(tables: Table[]): string[] {
  return tables
    .filter((t) => CODE_HEADERS.has(unquote(t.header[0] ?? '').toLowerCase()))
    .flatMap((t) => t.rows.map((row) => unquote(row[0] ?? '')));
}

/** Every `error` code (a snake_case word) listed in a code table. */
export function documentedErrorCodes(tables = documentTables()): string[] {
  return codeCells(tables).filter((code) => /^[a-z][a-z0-9_]*$/.test(code));
}

/** Every close code (four digits) listed in a code table. */
export function documentedCloseCodes(tables = documentTables()): number[] {
  return codeCells(tables)
    .filter((code) => /^\d{4}$/.test(code))
    .map(Number);
}

// ------------------------------------------------------------- frames written by hand

/** One masked client frame (FIN set) with `opcode` (1 text, 8 close) and `payload`. */
export function maskedFrame(opcode: number, payload: Buffer): Buffer {
  const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const length = payload.length;
  const head =
    length < 126
      ? Buffer.from([0x80 | opcode, 0x80 | length])
      : Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff]);
  const body = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([head, mask, body]);
}

/** A server frame: its opcode and payload (servers never mask). */
export interface ServerFrame {
  opcode: number;
  payload: Buffer;
}

/** The complete server frames at the start of `bytes` (after the HTTP head). */
export function parseFrames(bytes: Buffer): ServerFrame[] {
  const frames: ServerFrame[] = [];
  let at = 0;
  while (at + 2 <= bytes.length) {
    const opcode = bytes[at]! & 0x0f;
    let length = bytes[at + 1]! & 0x7f;
    let start = at + 2;
    if (length === 126) {
      if (start + 2 > bytes.length) break;
      length = bytes.readUInt16BE(start);
      start += 2;
    } else if (length === 127) {
      if (start + 8 > bytes.length) break;
      length = Number(bytes.readBigUInt64BE(start));
      start += 8;
    }
    if (start + length > bytes.length) break;
    frames.push({ opcode, payload: bytes.subarray(start, start + length) });
    at = start + length;
  }
  return frames;
}
