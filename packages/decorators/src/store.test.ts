import { describe, expect, test } from '@jest/globals';
import type { DecError } from './errors';
import { kControllerMetadata, openMethodRecord, readOwnRecord } from './store';
import type { ClassRecord } from './store';

function thrown(fn: () => unknown): DecError {
  try {
    fn();
  } catch (error) {
    return error as DecError;
  }
  throw new Error('expected a throw');
}

function context(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'method',
    name: 'm',
    static: false,
    private: false,
    metadata: {},
    addInitializer: () => {},
    ...overrides,
  };
}

describe('Symbol.metadata', () => {
  test('is defined once this package is loaded, as the registered symbol where missing', () => {
    expect(typeof Symbol.metadata).toBe('symbol');
    // Node 20 has no native Symbol.metadata, so the polyfill is the registered one that
    // esbuild's output falls back to as well.
    if (process.versions.node.startsWith('20.')) {
      expect(Symbol.metadata).toBe(Symbol.for('Symbol.metadata'));
    }
  });

  test('the record key is a registered symbol shared by every copy of the package', () => {
    expect(kControllerMetadata).toBe(Symbol.for('@pkg/decorators.controller@1'));
  });
});

describe('openMethodRecord', () => {
  test('creates the class entry and the method entry once', () => {
    const metadata: Record<PropertyKey, unknown> = {};
    const first = openMethodRecord('SocketOn', () => {}, context({ metadata }));
    const second = openMethodRecord('HttpRoute', () => {}, context({ metadata }));
    expect(first.classRecord).toBe(metadata[kControllerMetadata]);
    expect(second.method).toBe(first.method);
    expect(first.method).toEqual({
      name: 'm',
      socketRoutes: [],
      httpRoutes: [],
      onConnect: false,
      onDisconnect: false,
      rateLimit: undefined,
    });
    expect(first.site).toBe('@SocketOn() on method "m"');
  });

  test('writes to the own entry only, never through the base class metadata', () => {
    const base: Record<PropertyKey, unknown> = {};
    const baseSite = openMethodRecord('SocketOn', () => {}, context({ metadata: base }));
    const derived = Object.create(base) as Record<PropertyKey, unknown>;
    const derivedSite = openMethodRecord('SocketOn', () => {}, context({ metadata: derived }));
    expect(Object.hasOwn(derived, kControllerMetadata)).toBe(true);
    expect(derivedSite.classRecord).not.toBe(baseSite.classRecord);
    expect((base[kControllerMetadata] as ClassRecord).methods.size).toBe(1);
  });

  test('names symbol-keyed methods', () => {
    const site = openMethodRecord('OnConnect', () => {}, context({ name: Symbol('hook') }));
    expect(site.site).toBe('@OnConnect() on method "[Symbol(hook)]"');
  });

  test('refuses the legacy experimentalDecorators call shape, naming class and method', () => {
    class Legacy {}
    const error = thrown(() => openMethodRecord('SocketOn', Legacy.prototype, 'onChat'));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_LEGACY_DECORATORS');
    expect(error.message).toContain('@SocketOn() on Legacy.onChat');
    expect(error.message).toContain('experimentalDecorators');
    expect(error.message).toContain('remove');
    // static method: the target is the class itself
    expect(thrown(() => openMethodRecord('SocketOn', Legacy, Symbol('s'))).message).toContain(
      'Legacy.[Symbol(s)]',
    );
    expect(thrown(() => openMethodRecord('SocketOn', undefined, undefined)).code).toBe(
      'PKG_ERR_DEC_LEGACY_DECORATORS',
    );
    expect(thrown(() => openMethodRecord('SocketOn', {}, { name: 'x' })).code).toBe(
      'PKG_ERR_DEC_LEGACY_DECORATORS',
    );
  });

  test.each([
    [{ kind: 'getter' }, 'can only decorate methods, but was applied to the getter "m"'],
    [{ kind: 'field' }, 'to the field "m"'],
    [{ kind: 'class', name: undefined }, 'to the class (anonymous)'],
    [{ static: true }, 'to the static method "m"'],
    [{ private: true, name: '#m' }, 'to the private method "#m"'],
  ])('refuses %p', (overrides, what) => {
    const error = thrown(() => openMethodRecord('HttpRoute', () => {}, context(overrides)));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_TARGET');
    expect(error.message).toContain('@HttpRoute()');
    expect(error.message).toContain(what);
  });

  test('refuses a context without a metadata object', () => {
    const error = thrown(() =>
      openMethodRecord('RateLimit', () => {}, context({ metadata: undefined })),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_METADATA_UNAVAILABLE');
    expect(error.message).toContain('@RateLimit() on method "m"');
    expect(error.message).toContain('TypeScript 5.2');
  });
});

describe('readOwnRecord', () => {
  test('reads only the class’s own metadata entry', () => {
    const record: ClassRecord = { methods: new Map() };
    class Base {}
    Object.defineProperty(Base, Symbol.metadata, { value: { [kControllerMetadata]: record } });
    class Derived extends Base {}
    class Other {}
    Object.defineProperty(Other, Symbol.metadata, { value: { unrelated: true } });
    expect(readOwnRecord(Base)).toBe(record);
    expect(readOwnRecord(Derived)).toBeUndefined(); // inherited static, not own
    expect(readOwnRecord(Other)).toBeUndefined();
    expect(readOwnRecord(class {})).toBeUndefined();
  });

  test('ignores an entry inherited through the metadata prototype', () => {
    const baseMeta = { [kControllerMetadata]: { methods: new Map() } };
    class Derived {}
    Object.defineProperty(Derived, Symbol.metadata, { value: Object.create(baseMeta) });
    expect(readOwnRecord(Derived)).toBeUndefined();
  });
});
