// @pkg/core under test: the same three workloads as the peers.
import {
  HttpRoute,
  NullLogger,
  Response,
  Server,
  ServerConfig,
  SocketController,
  SocketOn,
} from '@pkg/core';

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
}

const server = new Server(
  new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0 }),
  undefined,
  undefined,
  undefined,
  new NullLogger(),
);
server.registerController(new BenchController());
await server.run();
process.stdout.write(`PORT ${server.getPort()}\n`);

// The runner asks for this process's CPU time (user + system, µs) with a line on stdin.
process.stdin.on('data', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`CPU ${user + system}\n`);
});
