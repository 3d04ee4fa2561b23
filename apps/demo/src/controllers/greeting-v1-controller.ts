import { Response, SocketController, type Request } from '@pkg/core';
import { HttpRoute } from '@pkg/decorators';

/** Version 1 of the greeting API: a flat document. Kept as it was when v2 arrived. */
export class GreetingV1Controller extends SocketController {
  @HttpRoute('GET', '/api/v1/greeting/{name}')
  greet(request: Request): Response {
    const name = String(request.getParam('name', ''));
    return Response.json({ version: 1, message: `Hello, ${name}!` });
  }
}
