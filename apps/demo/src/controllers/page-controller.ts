import { Response, SocketController, type Request } from '@pkg/core';
import { HttpRoute } from '@pkg/decorators';
import { CHAT_PAGE_HEADERS, CHAT_PAGE_HTML } from '../page';

/** Serves the chat page at `/` from the same server and port as the API and the WebSocket. */
export class PageController extends SocketController {
  @HttpRoute('GET', '/')
  page(_request: Request): Response {
    return Response.html(CHAT_PAGE_HTML, 200, { ...CHAT_PAGE_HEADERS });
  }
}
