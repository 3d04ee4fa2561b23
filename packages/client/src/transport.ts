/**
 * The socket underneath: any constructor with the WHATWG WebSocket interface. Browsers (and
 * Node 22+) have one as a global; on Node 20 the client loads the optional peer `ws`, or
 * uses the constructor given in the options.
 */
import { ClientError } from './errors';

/** What the client uses of a WebSocket instance (methods only, so DOM and ws both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  /** A string goes out as a text frame, bytes as one binary frame. */
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
}

/** A WebSocket constructor: the browser's `WebSocket`, `ws`'s default export, or similar. */
export type WebSocketConstructor = new (
  url: string,
  protocols?: string | string[],
) => WebSocketLike;

/** readyState value of an open socket (the same in every implementation). */
export const OPEN = 1;

/** The message of `ws`'s error when the server selected none of the offered subprotocols. */
const WS_NO_SUBPROTOCOL = 'Server sent no subprotocol';

interface ListenableSocket extends WebSocketLike {
  /** `'arraybuffer'` makes binary messages arrive as ArrayBuffers (browsers default to Blob). */
  binaryType?: unknown;
  /** The selected subprotocol ('' for none); every known implementation has it. */
  readonly protocol?: unknown;
  addEventListener(type: string, listener: (event: never) => void): void;
  removeEventListener?(type: string, listener: (event: never) => void): void;
  /** Only `ws` has it: an EventEmitter method. */
  on?: (event: string, listener: (...args: never[]) => void) => unknown;
  terminate?: () => void;
}

/** Finds a WebSocket constructor: the given one, the global one, or the `ws` package. */
export async function resolveWebSocket(
  given?: WebSocketConstructor,
): Promise<WebSocketConstructor> {
  if (given) return given;
  const global = (globalThis as { WebSocket?: unknown }).WebSocket;
  if (typeof global === 'function') return global as WebSocketConstructor;
  let loaded: unknown;
  try {
    // A variable specifier keeps bundlers from pulling `ws` into browser builds.
    const name = 'ws';
    loaded = await import(/* webpackIgnore: true */ /* @vite-ignore */ name);
  } catch {
    loaded = undefined;
  }
  const mod = loaded as { default?: unknown; WebSocket?: unknown } | undefined;
  const ctor = typeof mod?.default === 'function' ? mod.default : mod?.WebSocket;
  if (typeof ctor !== 'function') {
    throw new ClientError(
      'PKG_ERR_CLIENT_NO_WEBSOCKET',
      'There is no global WebSocket and the "ws" package could not be loaded: install it (npm install ws) or pass a constructor in the WebSocket option.',
    );
  }
  return ctor as WebSocketConstructor;
}

/** A refused upgrade, as far as the implementation lets us see it (only `ws` does). */
export interface UpgradeRefusal {
  status: number;
  body: string;
  /** The answer's `Retry-After` header, when it had one. */
  retryAfter?: string;
}

export interface SocketCallbacks {
  open(): void;
  message(text: string): void;
  /** One binary message (protocol version 1: a binary frame), as the bytes received. */
  binary(bytes: Uint8Array): void;
  close(code: number, reason: string, refusal: UpgradeRefusal | undefined): void;
}

/** A connection attempt: wires the socket's events to the callbacks, once. */
export class Connection {
  readonly #socket: ListenableSocket;
  #refusal: UpgradeRefusal | undefined;
  #closed = false;
  #noSubprotocol = false;
  readonly #callbacks: SocketCallbacks;

  /** `protocols`: the subprotocols to offer; none when empty. */
  constructor(
    Ctor: WebSocketConstructor,
    url: string,
    protocols: readonly string[],
    callbacks: SocketCallbacks,
  ) {
    this.#callbacks = callbacks;
    const socket = (
      protocols.length > 0 ? new Ctor(url, [...protocols]) : new Ctor(url)
    ) as ListenableSocket;
    this.#socket = socket;
    try {
      // Binary frames arrive as ArrayBuffers, read at once (a Blob would need a promise).
      socket.binaryType = 'arraybuffer';
    } catch {
      // An implementation without binaryType: its binary messages are read as they come.
    }
    socket.addEventListener('open', () => {
      if (!this.#closed) callbacks.open();
    });
    socket.addEventListener('message', (event: { data: unknown }) => {
      if (this.#closed) return;
      const { data } = event;
      if (typeof data === 'string') callbacks.message(data);
      else if (data instanceof ArrayBuffer) callbacks.binary(new Uint8Array(data));
      else if (data instanceof Uint8Array) callbacks.binary(data);
    });
    socket.addEventListener('close', (event: { code: number; reason: string }) =>
      this.#finish(event.code, event.reason),
    );
    // An error is always followed by a close event; the close carries the outcome. `ws`
    // (unlike browsers) fails a handshake in which the server selected no subprotocol.
    socket.addEventListener('error', (event: { message?: unknown }) => {
      if (event.message === WS_NO_SUBPROTOCOL) this.#noSubprotocol = true;
    });
    if (typeof socket.on === 'function') this.#watchRefusal(socket);
  }

  /**
   * The subprotocol the server selected ('' for none), or undefined when the
   * implementation does not say.
   */
  get protocol(): string | undefined {
    const { protocol } = this.#socket;
    return typeof protocol === 'string' ? protocol : undefined;
  }

  /** The handshake failed only because the server selected none of the offered subprotocols. */
  get noSubprotocol(): boolean {
    return this.#noSubprotocol;
  }

  get isOpen(): boolean {
    return !this.#closed && this.#socket.readyState === OPEN;
  }

  /** Sends a text frame (a string) or one binary frame (bytes). */
  send(data: string | Uint8Array): boolean {
    if (!this.isOpen) return false;
    this.#socket.send(data);
    return true;
  }

  /** Closes the socket; the close callback runs at once with this code and reason. */
  close(code: number, reason: string): void {
    if (this.#closed) return;
    try {
      if (this.#socket.readyState === OPEN) this.#socket.close(code, reason);
      else if (typeof this.#socket.terminate === 'function') this.#socket.terminate();
      else this.#socket.close();
    } catch {
      // A socket that is still connecting may refuse close(); it is abandoned either way.
    }
    this.#finish(code, reason);
  }

  #finish(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#callbacks.close(code, reason, this.#refusal);
  }

  /** `ws` reports the status and body of a refused upgrade, which browsers hide. */
  #watchRefusal(socket: ListenableSocket): void {
    const onResponse = (
      _req: unknown,
      res: {
        statusCode?: number;
        headers?: Record<string, string | string[] | undefined>;
        setEncoding(e: string): void;
        on(e: string, f: (chunk?: string) => void): void;
      },
    ): void => {
      let body = '';
      const done = (): void => {
        const header = res.headers?.['retry-after'];
        const retryAfter = Array.isArray(header) ? header[0] : header;
        this.#refusal = {
          status: res.statusCode ?? 0,
          body: body.trim().slice(0, 1024),
          ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
        };
        socket.terminate?.();
      };
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        if (body.length < 1024) body += chunk ?? '';
      });
      res.on('end', done);
      res.on('error', done);
    };
    socket.on!('unexpected-response', onResponse as (...args: never[]) => void);
  }
}
