// The built package, as users get it: dist/index.cjs (require) and dist/index.js (import),
// used by classes compiled with TypeScript's and esbuild's decorator output (the compilers
// behind ts-jest, tsc and tsup). jest compiles tests to CommonJS and cannot import ESM
// in-process, so the ESM cases run in a child `node`. The root `pnpm test` builds every
// package before jest; on its own, build first with `pnpm exec tsup` in packages/decorators.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import ts from 'typescript';
import * as source from '../src/index';

const distDir = path.resolve(__dirname, '..', 'dist');
const esmFile = path.join(distDir, 'index.js');
const cjsFile = path.join(distDir, 'index.cjs');
const built = { esm: pathToFileURL(esmFile).href, cjs: pathToFileURL(cjsFile).href };

type Compiler = 'typescript' | 'esbuild';
type Build = keyof typeof built;

interface EsbuildApi {
  transformSync(
    code: string,
    options: { loader: 'ts'; format: 'esm' | 'cjs'; target: string; tsconfigRaw: object },
  ): { code: string };
}

function loadEsbuild(): EsbuildApi {
  // esbuild is tsup's compiler; resolve the copy tsup uses.
  const fromTsup = require.resolve('esbuild', { paths: [path.dirname(require.resolve('tsup'))] });
  return require(fromTsup) as EsbuildApi;
}

/** Compiles TypeScript with the compiler's own decorator output (standard, or legacy when asked). */
function compile(
  compiler: Compiler,
  code: string,
  format: 'esm' | 'cjs',
  experimentalDecorators = false,
): string {
  if (compiler === 'typescript') {
    return ts.transpileModule(code, {
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: format === 'esm' ? ts.ModuleKind.ESNext : ts.ModuleKind.CommonJS,
        experimentalDecorators,
      },
    }).outputText;
  }
  return loadEsbuild().transformSync(code, {
    loader: 'ts',
    format,
    target: 'node20',
    tsconfigRaw: { compilerOptions: { experimentalDecorators } },
  }).code;
}

/** Runs code in a fresh `node` and returns the JSON it printed last. */
function runNode(code: string, format: 'esm' | 'cjs'): unknown {
  const args = format === 'esm' ? ['--input-type=module', '-e', code] : ['-e', code];
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', cwd: distDir });
  if (result.status !== 0) {
    throw new Error(`node exited with ${String(result.status)}:\n${result.stderr}`);
  }
  const lines = result.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? 'null');
}

/** A controller using every decorator, decorated with one build and read with another. */
function controllerProgram(decorateWith: Build, readWith: Build): string {
  return `
    import * as decorate from '${built[decorateWith]}';
    import * as read from '${built[readWith]}';
    const { SocketOn, OnConnect, OnDisconnect, HttpRoute, RateLimit } = decorate;

    const audit = async (_context: unknown, next: () => Promise<void>) => next();
    class Auth { handle(_request: unknown, next: () => Promise<unknown>) { return next(); } }

    abstract class Base {
      @OnConnect()
      hello(_clientId: string) {}

      @SocketOn('chat.message', { middlewares: [audit] })
      @RateLimit(5, 10)
      message(_clientId: string, _data: unknown) {}
    }

    class Chat extends Base {
      @HttpRoute('get', '/rooms/{room}', { excludeGlobalMiddlewares: [Auth] })
      @RateLimit({ maxCount: 2, timeWindow: 60 })
      room() { return null as never; }

      @OnDisconnect()
      bye(_clientId: string) {}

      override message() {}
    }

    let refused: unknown = null;
    try {
      class Bad { @SocketOn('') empty() {} }
      void Bad;
    } catch (error) {
      const e = error as TypeError & { code: string };
      refused = { type: e.constructor.name, code: e.code, message: e.message };
    }

    const metadata = read.getControllerMetadata(Chat);
    const plain = JSON.parse(
      JSON.stringify(metadata, (_k, v) => (typeof v === 'function' ? 'fn:' + v.name : v)),
    );
    console.log(JSON.stringify({
      metadata: plain,
      refused,
      polyfill: Symbol.metadata === Symbol.for('Symbol.metadata'),
      codes: Object.keys(read.decErrorCodes),
    }));
  `;
}

const expectedMetadata = {
  socketRoutes: [
    {
      event: 'chat.message',
      handler: 'message',
      middlewares: ['fn:audit'],
      excludeGlobalMiddlewares: [],
      rateLimit: { maxCount: 5, timeWindow: 10 },
    },
  ],
  httpRoutes: [
    {
      method: 'GET',
      path: '/rooms/{room}',
      handler: 'room',
      middlewares: [],
      excludeGlobalMiddlewares: ['fn:Auth'],
      rateLimit: { maxCount: 2, timeWindow: 60 },
    },
  ],
  connectHandlers: ['hello'],
  disconnectHandlers: ['bye'],
};

beforeAll(() => {
  for (const file of [esmFile, cjsFile]) {
    if (!existsSync(file)) {
      throw new Error(
        `${path.relative(process.cwd(), file)} is missing: build the package first ` +
          '(`pnpm exec tsup` in packages/decorators, or `pnpm build` at the root).',
      );
    }
  }
});

describe('built CommonJS file, required in-process', () => {
  test('decorates a class (ts-jest output) and reads it back', () => {
    const cjs = require(cjsFile) as typeof source;
    const audit = async (_context: unknown, next: () => Promise<void>): Promise<void> => next();

    class Chat {
      @cjs.SocketOn('chat.message', { middlewares: [audit] })
      @cjs.RateLimit(5, 10)
      message(_clientId: string, _data: unknown): void {}

      @cjs.OnConnect()
      hello(_clientId: string): void {}
    }

    const expected = {
      socketRoutes: [
        {
          event: 'chat.message',
          handler: 'message',
          middlewares: [audit],
          excludeGlobalMiddlewares: [],
          rateLimit: { maxCount: 5, timeWindow: 10 },
        },
      ],
      httpRoutes: [],
      connectHandlers: ['hello'],
      disconnectHandlers: [],
    };
    expect(cjs.getControllerMetadata(Chat)).toEqual(expected);
    // The record key is a registered symbol: the source build reads what the CJS build wrote.
    expect(source.getControllerMetadata(Chat)).toEqual(expected);
    expect(cjs.decErrorCodes).toEqual(source.decErrorCodes);
  });

  test('errors carry their codes', () => {
    const cjs = require(cjsFile) as typeof source;
    let caught: unknown;
    try {
      class Bad {
        @cjs.HttpRoute('GET', 'no-slash')
        route(): never {
          throw new Error('not called');
        }
      }
      void Bad;
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TypeError);
    expect((caught as { code?: string }).code).toBe('PKG_ERR_DEC_INVALID_PATH');
  });
});

describe.each<[Compiler, Build, Build]>([
  ['typescript', 'esm', 'esm'],
  ['typescript', 'cjs', 'esm'],
  ['esbuild', 'esm', 'esm'],
  ['esbuild', 'esm', 'cjs'],
])(
  '%s output decorated with the %s build, read with the %s build',
  (compiler, decorateWith, readWith) => {
    test('records every decorator, inheritance included, in a plain node process', () => {
      const output = runNode(
        compile(compiler, controllerProgram(decorateWith, readWith), 'esm'),
        'esm',
      ) as {
        metadata: unknown;
        refused: { type: string; code: string; message: string };
        polyfill: boolean;
        codes: string[];
      };
      expect(output.metadata).toEqual(expectedMetadata);
      expect(output.refused.type).toBe('TypeError');
      expect(output.refused.code).toBe('PKG_ERR_DEC_INVALID_EVENT');
      expect(output.refused.message).toContain(
        '@SocketOn() on method "empty": the event name is empty',
      );
      expect(output.polyfill).toBe(true);
      expect(output.codes).toEqual(Object.keys(source.decErrorCodes));
    });
  },
);

describe.each<Compiler>(['typescript', 'esbuild'])(
  '%s with experimentalDecorators (legacy decorators)',
  (compiler) => {
    test('the decorator throws, naming class and method and saying to turn the flag off', () => {
      const program = `
        const { SocketOn } = require(${JSON.stringify(cjsFile)});
        let result = { code: 'none', message: '' };
        try {
          class LegacyChat {
            @SocketOn('chat.message')
            onMessage(_clientId: string) {}
          }
          void LegacyChat;
        } catch (error) {
          result = { code: (error as { code: string }).code, message: (error as Error).message };
        }
        console.log(JSON.stringify(result));
      `;
      const output = runNode(compile(compiler, program, 'cjs', true), 'cjs') as {
        code: string;
        message: string;
      };
      expect(output.code).toBe('PKG_ERR_DEC_LEGACY_DECORATORS');
      expect(output.message).toContain('@SocketOn() on LegacyChat.onMessage');
      expect(output.message).toContain('remove "experimentalDecorators"');
    });
  },
);
