// @pkg/core under test: the same routes and events as the peers. Options come from the
// runner as JSON in BENCH_PKG_CONFIG (each workload says which), over host 127.0.0.1 and
// port 0; everything else is the library's default.
import {
  HttpRoute,
  Request,
  Response,
  Server,
  ServerConfig,
  SocketController,
  SocketOn,
} from '@pkg/core';
import { serve } from './control.mjs';

class BenchController extends SocketController {
  @SocketOn('echo')
  echo(clientId: string, data: Record<string, unknown>): void {
    this.emit(clientId, 'echo', data);
  }

  @SocketOn('fanout')
  fanout(_clientId: string, data: Record<string, unknown>): void {
    this.broadcast('tick', data);
  }

  @HttpRoute('GET', '/json')
  json(): Response {
    return Response.json({ hello: 'world' });
  }

  @HttpRoute('GET', '/users/{id}')
  user(request: Request): Response {
    return Response.json({ id: request.getParam('id') });
  }

  @HttpRoute('POST', '/echo')
  echoBody(request: Request): Response {
    return Response.json(request.getBody());
  }
}

const options = JSON.parse(process.env.BENCH_PKG_CONFIG ?? '{}') as ConstructorParameters<
  typeof ServerConfig
>[0];
const silent = (): void => {};
// A logger that drops everything (structurally the library's logger interface), so that
// logging is not part of what is measured and stdout stays free for the runner.
const logger = {
  emergency: silent,
  alert: silent,
  critical: silent,
  error: silent,
  warning: silent,
  notice: silent,
  info: silent,
  debug: silent,
  log: silent,
  exception: silent,
};

const server = new Server(
  new ServerConfig({ ...options, host: '127.0.0.1', port: 0 }),
  undefined,
  undefined,
  undefined,
  logger,
);
server.registerController(new BenchController());
await server.run();
serve({
  port: server.getPort(),
  count: () => server.getClientCount(),
  close: () => server.close(),
});
