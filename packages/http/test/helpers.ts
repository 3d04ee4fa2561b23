import { createServer, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { AbstractLogger } from '@pkg/logger';
import type { LoggerInterface } from '@pkg/logger';
import type { HttpHandler } from '../src/index';

/** A node:http server on 127.0.0.1 and a free port, serving through an HttpHandler. */
export interface TestServer {
  readonly server: Server;
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export async function startServer(
  handler: HttpHandler,
  options: ServerOptions = {},
): Promise<TestServer> {
  const server = createServer(options, (req, res) => void handler.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** What a raw exchange produced: the bytes the server sent and whether it closed the socket. */
export interface RawExchange {
  readonly text: string;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** True when the server closed the connection after answering. */
  readonly closed: boolean;
}

function complete(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return false;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end));
  return text.length - end - 4 >= Number(length?.[1] ?? 0);
}

/**
 * Sends bytes as they are over a plain TCP socket and reads the first answer. Resolves once
 * the server closes the connection, or, for `keepAlive` exchanges, once the answer is
 * complete (the socket is then closed by the test).
 */
export function rawExchange(
  port: number,
  payload: string,
  options: { keepAlive?: boolean } = {},
): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let closed = false;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      const end = text.indexOf('\r\n\r\n');
      const head = end === -1 ? text : text.slice(0, end);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        text,
        status: Number(statusLine.split(' ')[1] ?? 0),
        headers,
        body: end === -1 ? '' : text.slice(end + 4),
        closed,
      });
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (options.keepAlive === true && complete(text)) {
        socket.destroy();
        finish();
      }
    });
    socket.on('end', () => {
      closed = true;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET') closed = true;
      else reject(err);
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.write(payload);
  });
}

export interface LogLine {
  level: string;
  message: string;
  context?: Record<string, unknown>;
  error?: unknown;
}

/** A logger that keeps every line, for assertions. */
export function recordingLogger(lines: LogLine[] = []): LoggerInterface & { lines: LogLine[] } {
  class Recording extends AbstractLogger {
    readonly lines = lines;
    log(level: string, message: string, context?: Record<string, unknown>): void {
      lines.push({ level, message, context });
    }
    override exception(error: unknown, context?: Record<string, unknown>): void {
      lines.push({
        level: 'exception',
        message: String((error as Error)?.message),
        context,
        error,
      });
    }
  }
  return new Recording();
}
