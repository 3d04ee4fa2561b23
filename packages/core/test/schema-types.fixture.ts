import { getControllerMetadata } from '@pkg/decorators';

export { HttpRoute, SocketController, SocketOn } from '../src/index';

/** How many WebSocket and HTTP routes a class declares. */
export function getControllerMetadataForTest(ctor: abstract new (...args: never[]) => unknown): {
  ws: number;
  http: number;
} {
  const meta = getControllerMetadata(ctor);
  return { ws: meta.socketRoutes.length, http: meta.httpRoutes.length };
}
