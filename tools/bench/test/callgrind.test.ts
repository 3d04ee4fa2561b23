// The callgrind reader behind `INSTR_PROFILE=1` (lib/callgrind.mjs): JIT-compiled code gets
// its name from V8's perf map (the entry written last wins where code was replaced), costs
// are split into a function's own and its calls', and the heaviest functions come first.
// lib/callgrind.mjs is an ES module: it runs in a child Node process.
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const reader = pathToFileURL(path.join(__dirname, '..', 'lib', 'callgrind.mjs')).href;

const DUMP = `version: 1
creator: callgrind
positions: line
events: Ir
summary: 180
ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) 0x0000000000001010
0 100
cfn=(2) Builtins_JsonStringify
calls=1 0
0 50
fn=(2)
0 50
fn=(3) 0x0000000000002005'2
0 30
cfn=(1)
calls=1 0
0 150
`;

// Code at 0x2000 was replaced: the later entry names what ran there.
const PERF_MAP = `1000 100 JS:*handle file:///app/packages/http/dist/index.js:12:3
2000 80 JS:~gone file:///app/packages/core/dist/index.js:1:1
2000 80 JS:*onRequest file:///app/packages/core/dist/index.js:40:5
`;

function run(script: string): unknown {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout);
}

describe('callgrind reader', () => {
  test('names JIT code from the perf map and ranks functions by instructions per operation', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callgrind-test-'));
    try {
      const dump = path.join(dir, 'callgrind.out.1');
      const map = path.join(dir, 'perf.map');
      fs.writeFileSync(dump, DUMP);
      fs.writeFileSync(map, PERF_MAP);
      const out = run(`
        import { readCallgrind, heaviestFunctions, layerOf } from ${JSON.stringify(reader)};
        const profile = readCallgrind(${JSON.stringify(dump)}, ${JSON.stringify(map)});
        process.stdout.write(JSON.stringify({
          total: profile.total,
          self: Object.fromEntries(profile.self),
          top: heaviestFunctions(profile, /packages\\//, 10),
          layers: ['JS:*send /app/node_modules/ws/lib/sender.js:3:1', 'JS:*end node:_http_outgoing:1034:45',
            ...profile.self.keys(), 'RegExp:^a$', 'malloc'].map(layerOf),
        }));
      `) as {
        total: number;
        self: Record<string, number>;
        top: Array<{ name: string; inclusive: number; self: number; callees: unknown[] }>;
        layers: string[];
      };
      expect(out.total).toBe(180);
      expect(out.self).toEqual({
        'JS:*handle file:///app/packages/http/dist/index.js:12:3': 100,
        Builtins_JsonStringify: 50,
        'JS:*onRequest file:///app/packages/core/dist/index.js:40:5': 30,
      });
      expect(out.layers).toEqual([
        'JavaScript: the server and its packages',
        "JavaScript: Node's own",
        'JavaScript: the server and its packages',
        "V8's built-ins",
        'JavaScript: the server and its packages',
        'regular expressions',
        'native (V8, Node, libc, kernel entry)',
      ]);
      expect(out.top).toEqual([
        {
          name: 'onRequest (core/dist/index.js:40)',
          inclusive: 18,
          self: 3,
          callees: [{ name: 'handle (http/dist/index.js:12)', inclusive: 15 }],
        },
        {
          name: 'handle (http/dist/index.js:12)',
          inclusive: 15,
          self: 10,
          callees: [{ name: 'Builtins_JsonStringify', inclusive: 5 }],
        },
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('leaves code the perf map does not cover under its address', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callgrind-test-'));
    try {
      const dump = path.join(dir, 'callgrind.out.1');
      fs.writeFileSync(dump, DUMP);
      const out = run(`
        import { readCallgrind } from ${JSON.stringify(reader)};
        const profile = readCallgrind(${JSON.stringify(dump)}, undefined);
        process.stdout.write(JSON.stringify(Object.fromEntries(profile.self)));
      `);
      expect(out).toEqual({
        '0x0000000000001010': 100,
        Builtins_JsonStringify: 50,
        '0x0000000000002005': 30,
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("counts V8's compiling apart from the code it runs", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callgrind-test-'));
    try {
      const dump = path.join(dir, 'callgrind.out.1');
      // A dump whose window holds a TurboFan compilation next to the code being counted,
      // and functions whose names only look alike (the JSON parser, a compile-cache lookup
      // in Node).
      fs.writeFileSync(
        dump,
        `version: 1
creator: callgrind
events: Ir
summary: 1000
fn=(1) v8::internal::compiler::GraphReducer::ReduceTop()
0 300
fn=(2) v8::internal::compiler::LinearScanAllocator::AllocateRegisters()
0 120
fn=(3) v8::internal::Compiler::Compile(v8::internal::Isolate*, v8::internal::Handle<v8::internal::JSFunction>)
0 30
fn=(4) v8::internal::maglev::MaglevGraphBuilder::BuildBody()
0 50
fn=(5) v8::internal::JsonParser<unsigned char>::ParseJsonValue()
0 200
fn=(6) node::CompileCacheHandler::Get()
0 100
fn=(7) Builtins_JsonStringify
0 200
`,
      );
      const out = run(`
        import { readCallgrind, compilingInstructions } from ${JSON.stringify(reader)};
        const profile = readCallgrind(${JSON.stringify(dump)});
        process.stdout.write(JSON.stringify({ total: profile.total, summary: profile.summary, compiling: compilingInstructions(profile) }));
      `);
      expect(out).toEqual({ total: 1000, summary: 1000, compiling: 500 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
