// The tables of docs/protocol.md that @pkg/wire owns: the `error` codes (`wireErrors`) and
// the close codes (`closeCodes`). Each sits between two markers in the page,
//   <!-- generated:NAME --> ... <!-- /generated:NAME -->
// and is rewritten from the built package; the page is then formatted as `prettier --check`
// expects. errors-doc.mjs calls this, so `pnpm run docs:errors --check` covers both pages.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const NOTE = "generated from @pkg/wire's tables by `pnpm run docs:errors`; edit them there";

const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const yesNo = (flag) => (flag ? 'yes' : 'no');

function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ].join('\n');
}

function errorTable(wire) {
  const rows = Object.entries(wire.wireErrors).map(([code, info]) => [
    `\`${code}\``,
    info.version,
    info.when,
    info.fields,
    yesNo(info.throttled),
    yesNo(info.protocolError),
  ]);
  return table(
    ['`data.code`', 'version', 'when', 'extra fields', 'throttled', 'protocol error'],
    rows,
  );
}

const SENT_BY = { server: 'server', client: 'client', either: 'both', nobody: 'never sent' };
const SESSION = {
  kept: 'kept',
  ends: 'ends',
  moved: 'moves to the new connection',
  none: 'none yet',
};

function closeTable(wire, version) {
  const entries = Object.entries(wire.closeCodes).filter(([, info]) => info.version === version);
  const listed = entries.filter(([, info]) => info.sentBy !== 'nobody' && !info.retired);
  const rows = listed.map(([code, info]) => [
    `\`${code}\``,
    SENT_BY[info.sentBy],
    info.meaning,
    code === String(wire.CloseCode.SERVICE_RESTART) ? 'yes, after the hint' : yesNo(info.reconnect),
    SESSION[info.session],
  ]);
  const lines = [
    table(['code', 'sent by', 'meaning', 'client reconnects', 'session (version 1)'], rows),
  ];
  const others = entries.filter(([, info]) => info.sentBy === 'nobody' || info.retired);
  if (others.length > 0) {
    lines.push('');
    for (const [code, info] of others) {
      const what = info.retired ? 'retired' : 'never sent, only reported by the WebSocket';
      const again = info.reconnect ? 'the client reconnects' : 'the client stops';
      lines.push(
        `- \`${code}\` (${what}): ${info.meaning}; ${again}, the session is ${info.session}.`,
      );
    }
  }
  return lines.join('\n');
}

/** The generated blocks by marker name. */
function blocks(wire) {
  return {
    'wire-errors': errorTable(wire),
    'close-codes-v0': closeTable(wire, 0),
    'close-codes-v1': closeTable(wire, 1),
  };
}

/**
 * Rewrites the generated blocks of docs/protocol.md. Returns null when the page is up to
 * date, else the problem (with `check`) or a note of what was written.
 */
export async function protocolTables(root, check) {
  const file = path.join(root, 'packages', 'wire', 'dist', 'index.js');
  if (!existsSync(file)) return `@pkg/wire is not built (${file} missing): run the build first.`;
  const wire = await import(pathToFileURL(file).href);
  const target = path.join(root, 'docs', 'protocol.md');
  const current = readFileSync(target, 'utf8');
  let text = current;
  for (const [name, body] of Object.entries(blocks(wire))) {
    const open = `<!-- generated:${name} (${NOTE}) -->`;
    const close = `<!-- /generated:${name} -->`;
    const start = text.indexOf(open);
    const end = text.indexOf(close);
    if (start < 0 || end < start) {
      return `docs/protocol.md has no "${open}" ... "${close}" block.`;
    }
    text = `${text.slice(0, start + open.length)}\n\n${body}\n\n${text.slice(end)}`;
  }
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(target)) ?? {};
  text = await prettier.format(text, { ...options, filepath: target });
  if (text === current) return null;
  if (check) {
    return 'docs/protocol.md is out of date with @pkg/wire: run `pnpm run docs:errors`.';
  }
  writeFileSync(target, text);
  return undefined;
}
