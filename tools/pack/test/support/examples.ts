/**
 * Finds the code blocks of the READMEs and docs/ that a user may copy, so that
 * `examples.test.ts` can compile them (and run the ones marked to run) against the packed
 * packages. Every fenced block is classified; nothing is left out without a visible reason:
 *
 * - ```ts, ```typescript, ```mts, ```cts, ```js, ```javascript, ```mjs, ```cjs: an example.
 *   It is compiled (JavaScript type-checked too) unless marked `skip`.
 * - ```sh, ```json, ```http, ```nginx, ```text and the other languages of `TEXT_LANGUAGES`:
 *   commands, data, wire messages and output; not compiled. A ```json block marked
 *   `tsconfig` is the compiler configuration the examples are compiled with.
 * - A fence without a language is output or plain text; one whose first line reads like
 *   code is an error (give it a language).
 *
 * Markers are HTML comments (invisible on GitHub and npm) directly above the fence, blank
 * lines and other markers in between allowed:
 *
 *   <!-- example: skip <why> -->        not compiled: a signature listing, pseudo-code...
 *   <!-- example: prelude               code put before the block (imports, `declare const
 *   import { Server } from '@pkg/core';  server: Server;`) so that a fragment compiles as
 *   declare const server: Server;        a file; lines in errors still point at the block.
 *   -->
 *   <!-- example: file <name> -->       the file name (`shared/events.ts`, `server.cjs`);
 *                                       by default a first line `// name.ext` names it.
 *                                       Blocks of one document share a directory, so one
 *                                       can import another (`./shared/events.js`).
 *   <!-- example: run -->               also run with node: must exit 0.
 *   <!-- example: run server -->        also run with node and PORT=0: must print a line
 *                                       with `listening on`, then is stopped.
 *   <!-- example: tsconfig -->          (on ```json) the tsconfig the document recommends.
 *   <!-- example: some-label -->        a bare word: a label another test finds the block by.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';

export const CODE_LANGUAGES: Record<string, string> = {
  ts: 'ts',
  typescript: 'ts',
  mts: 'mts',
  cts: 'cts',
  js: 'js',
  javascript: 'js',
  mjs: 'mjs',
  cjs: 'cjs',
};

export const TEXT_LANGUAGES = new Set([
  'sh',
  'bash',
  'shell',
  'console',
  'json',
  'jsonc',
  'http',
  'nginx',
  'ini',
  'toml',
  'yaml',
  'yml',
  'text',
  'txt',
  'dockerfile',
  'diff',
  'html',
  'csv',
  // Diagrams (GitHub renders them): no code a user runs.
  'mermaid',
]);

export interface Block {
  /** The document, relative to the repository root, with `/`. */
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's language as written ('' when none). */
  lang: string;
  code: string;
  /** 'code': compiled; 'skip': marked not to be; 'text': not code; 'tsconfig': the config. */
  kind: 'code' | 'skip' | 'text' | 'tsconfig';
  skipReason?: string;
  prelude: string;
  /** The file name (relative to the document's directory), for 'code' blocks. */
  file: string;
  run?: 'exit' | 'server';
}

export interface Extraction {
  blocks: Block[];
  /** Markers and fences the extractor could not accept, each with where and why. */
  problems: string[];
}

const MARKER = /^<!--\s*example:\s*([\s\S]*?)\s*-->$/;
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)[^\n]*$/;
const NAMED = /^\s*\/\/\s*((?:[\w-]+\/)*[\w.-]+\.(?:ts|mts|cts|js|mjs|cjs))(?=\s|,|:|$)/;
const LOOKS_LIKE_CODE =
  /^\s*(import |export |const |let |class |interface |function |await |new [A-Z]|server\.)/;

/** The extension a block of this language gets when nothing names its file. */
function defaultExtension(lang: string): string {
  return CODE_LANGUAGES[lang] ?? 'ts';
}

interface Marker {
  directive: string;
  rest: string;
  line: number;
}

/** Splits a document into blocks and checks their markers. */
export function extract(doc: string, text: string): Extraction {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  const problems: string[] = [];
  let pending: Marker[] = [];
  const used = new Set<string>();

  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    const trimmed = raw.trim();
    if (trimmed.startsWith('<!--') && /^<!--\s*example:/.test(trimmed)) {
      // A marker may span lines (a prelude): read up to the closing `-->`.
      let j = i;
      let comment = trimmed;
      while (!comment.endsWith('-->') && j + 1 < lines.length) {
        j++;
        comment += `\n${lines[j] ?? ''}`;
      }
      const body = MARKER.exec(comment.trim())?.[1];
      if (body === undefined) {
        problems.push(`${doc}:${i + 1}: an example marker that never closes with -->`);
      } else {
        const directive = /^\S*/.exec(body)?.[0] ?? '';
        const firstLineEnd = body.indexOf('\n');
        const rest =
          directive === 'prelude'
            ? firstLineEnd === -1
              ? ''
              : body.slice(firstLineEnd + 1)
            : body.slice(directive.length).replace(/\s+/g, ' ');
        pending.push({ directive, rest: rest.trim(), line: i + 1 });
      }
      i = j;
      continue;
    }
    const fence = FENCE.exec(raw);
    if (fence === null) {
      if (trimmed !== '' && pending.length > 0) {
        problems.push(
          `${doc}:${pending[0]?.line}: an example marker not followed by a code block (put it directly above the fence)`,
        );
        pending = [];
      }
      continue;
    }
    const indent = fence[1] ?? '';
    const ticks = fence[2] ?? '```';
    const lang = (fence[3] ?? '').toLowerCase();
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j] ?? '';
      if (l.trim().startsWith(ticks) && l.trim().replace(/[`~]/g, '') === '') break;
      body.push(l.startsWith(indent) ? l.slice(indent.length) : l.trimStart());
    }
    const code = `${body.join('\n')}\n`;
    const block = classify(doc, i + 1, lang, code, pending, problems);
    if (block.kind === 'code') {
      if (used.has(block.file)) {
        problems.push(
          `${doc}:${i + 1}: a second block named ${block.file} (name it with <!-- example: file other-name.ts -->)`,
        );
      }
      used.add(block.file);
    }
    blocks.push(block);
    pending = [];
    i = j;
  }
  if (pending.length > 0) {
    problems.push(`${doc}:${pending[0]?.line}: an example marker at the end of the document`);
  }
  return { blocks, problems };
}

function classify(
  doc: string,
  line: number,
  lang: string,
  code: string,
  markers: Marker[],
  problems: string[],
): Block {
  const where = `${doc}:${line}`;
  const block: Block = { doc, line, lang, code, kind: 'code', prelude: '', file: '' };
  const isCode = lang in CODE_LANGUAGES;
  if (!isCode) {
    block.kind = 'text';
    if (lang === '') {
      const first = code.split('\n').find((l) => l.trim() !== '') ?? '';
      if (LOOKS_LIKE_CODE.test(first)) {
        problems.push(
          `${where}: a fence without a language holding code: write \`\`\`ts (or js), or \`\`\`text for output`,
        );
      }
    } else if (!TEXT_LANGUAGES.has(lang)) {
      problems.push(
        `${where}: unknown fence language "${lang}": add it to CODE_LANGUAGES or TEXT_LANGUAGES in tools/pack/test/support/examples.ts`,
      );
    }
  }
  let named: string | undefined;
  for (const m of markers) {
    switch (m.directive) {
      case 'skip':
        if (m.rest === '') problems.push(`${where}: "example: skip" needs a reason`);
        if (!isCode) problems.push(`${where}: "example: skip" on a block that is not code`);
        block.kind = 'skip';
        block.skipReason = m.rest;
        break;
      case 'prelude':
        if (m.rest === '') problems.push(`${where}: an empty prelude`);
        block.prelude = `${m.rest}\n`;
        break;
      case 'file':
        if (!/^(?:[\w-]+\/)*[\w.-]+\.(?:ts|mts|cts|js|mjs|cjs)$/.test(m.rest)) {
          problems.push(`${where}: "example: file" needs a relative file name, got "${m.rest}"`);
        }
        named = m.rest;
        break;
      case 'run':
        if (m.rest !== '' && m.rest !== 'server') {
          problems.push(`${where}: "example: run" takes nothing or "server", got "${m.rest}"`);
        }
        block.run = m.rest === 'server' ? 'server' : 'exit';
        break;
      case 'tsconfig':
        if (lang !== 'json') problems.push(`${where}: "example: tsconfig" on a non-json block`);
        block.kind = 'tsconfig';
        break;
      default:
        // A bare word is a label other tests find the block by (`<!-- example: chat -->`).
        if (/^[a-z][\w-]*$/.test(m.directive) && m.rest === '') break;
        problems.push(
          `${where}: unknown example marker "${m.directive}" (skip, prelude, file, run, tsconfig)`,
        );
    }
  }
  if (block.kind === 'skip' && block.run !== undefined) {
    problems.push(`${where}: a block marked both skip and run`);
  }
  if (block.kind === 'code') {
    named ??= NAMED.exec(code.split('\n')[0] ?? '')?.[1];
    block.file = named ?? `line-${line}.${defaultExtension(lang)}`;
  }
  return block;
}

/**
 * The documents whose blocks users copy: the root README, every package's README and every
 * page of docs/. (apps/*\/README.md quote the demo's own sources, compiled with the demo.)
 */
export function documents(root: string): string[] {
  const docs = ['README.md'];
  for (const entry of readdirSync(path.join(root, 'packages')).sort()) {
    if (existsSync(path.join(root, 'packages', entry, 'README.md'))) {
      docs.push(`packages/${entry}/README.md`);
    }
  }
  for (const entry of readdirSync(path.join(root, 'docs')).sort()) {
    if (entry.endsWith('.md')) docs.push(`docs/${entry}`);
  }
  return docs;
}

/** Every block of every document, with the problems found. */
export function extractAll(root: string): Extraction {
  const all: Extraction = { blocks: [], problems: [] };
  for (const doc of documents(root)) {
    const { blocks, problems } = extract(doc, readFileSync(path.join(root, doc), 'utf8'));
    all.blocks.push(...blocks);
    all.problems.push(...problems);
  }
  return all;
}

/** The directory (under the examples root) that holds a document's blocks. */
export function docDir(doc: string): string {
  return doc.replace(/\.md$/, '').replace(/[^\w-]+/g, '_');
}
