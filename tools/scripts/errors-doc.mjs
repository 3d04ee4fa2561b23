#!/usr/bin/env node
// Writes docs/errors.md from the error-code tables that each package exports
// (`<area>ErrorCodes`, built files), and the wire tables of docs/protocol.md (error and
// close codes, see protocol-tables.mjs) from @pkg/wire's. With --check it only compares and
// fails when a page is out of date, so CI catches a code added without its documentation.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { protocolTables } from './protocol-tables.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const areas = [
  ['@pkg/logger', 'logger', 'logErrorCodes'],
  ['@pkg/http', 'http', 'httpErrorCodes'],
  ['@pkg/ws-protocol', 'ws-protocol', 'wsErrorCodes'],
  ['@pkg/decorators', 'decorators', 'decErrorCodes'],
  ['@pkg/core', 'core', 'coreErrorCodes'],
  ['@pkg/client', 'client', 'clientErrorCodes'],
  ['@pkg/redis-adapter', 'redis-adapter', 'redisErrorCodes'],
  ['@pkg/admin', 'admin', 'adminErrorCodes'],
];

const lines = [
  '# Error codes',
  '',
  'Every error a user can meet carries `err.code`; match on it, not on the message.',
  '`TypeError` is used for bad options and arguments, `RangeError` for limits.',
  "This page is generated from each package's `src/errors.ts` by",
  '`node tools/scripts/errors-doc.mjs`; CI runs it with `--check`.',
  '',
  '## HTTP error bodies',
  '',
  'Every HTTP answer the packages give on their own to a failed request or a refused WebSocket',
  'upgrade has one JSON body (`Content-Type: application/json; charset=utf-8`), whichever',
  'package answered:',
  '',
  '```json',
  '{ "error": "Forbidden", "code": "PKG_ERR_WS_ORIGIN_NOT_ALLOWED", "message": "Origin not allowed." }',
  '```',
  '',
  '- `error`, always: the reason phrase of the status (`Not Found`, `Service Unavailable`).',
  '- `code`, when the problem has one: a code from the tables below (`validation_failed` for a',
  '  failed schema, as on the WebSocket side). A client matches on it.',
  '- `message`, when there is more to say than the reason phrase: what was wrong.',
  '- then the details a code documents: `issues` of `validation_failed`, `retryAfter` (seconds)',
  '  of `PKG_ERR_HTTP_RATE_LIMITED`, and `stack` of a 500 with `debug` on.',
  '',
  'A 404 without a route is exactly `{"error": "Not Found"}` and a 500 exactly',
  '`{"error": "Internal Server Error"}`: what failed is logged, not told. Status codes and',
  'headers say the rest (`Retry-After` on 503 and 429, `Allow` on 405,',
  '`Sec-WebSocket-Version` on 426). `Response.error(status, { code, message })` of `@pkg/http`',
  'writes the same shape for an application.',
  '',
];
for (const [name, dir, exportName] of areas) {
  const file = path.join(root, 'packages', dir, 'dist', 'index.js');
  if (!existsSync(file)) {
    console.error(`${name} is not built (${file} missing): run the build first.`);
    process.exit(1);
  }
  const mod = await import(pathToFileURL(file).href);
  const table = mod[exportName];
  if (!table || typeof table !== 'object') {
    console.error(`${name} does not export ${exportName}.`);
    process.exit(1);
  }
  lines.push(
    `## ${name}`,
    '',
    '| code | HTTP status | close code | meaning |',
    '|---|---|---|---|',
  );
  for (const [code, info] of Object.entries(table)) {
    const meaning = String(info.message ?? '').replace(/\|/g, '\\|');
    lines.push(`| \`${code}\` | ${info.status ?? ''} | ${info.closeCode ?? ''} | ${meaning} |`);
  }
  lines.push('');
}
const text = lines.join('\n');
const target = path.join(root, 'docs', 'errors.md');
const check = process.argv.includes('--check');
let failed = false;
if (check) {
  const current = existsSync(target) ? readFileSync(target, 'utf8') : '';
  if (current !== text) {
    console.error('docs/errors.md is out of date: run `node tools/scripts/errors-doc.mjs`.');
    failed = true;
  } else console.log('docs/errors.md: up to date');
} else {
  writeFileSync(target, text);
  console.log(`wrote ${path.relative(root, target)}`);
}
const protocol = await protocolTables(root, check);
if (protocol === null) console.log("docs/protocol.md: @pkg/wire's tables up to date");
else if (protocol === undefined) console.log("wrote @pkg/wire's tables into docs/protocol.md");
else {
  console.error(protocol);
  failed = true;
}
if (failed) process.exit(1);
