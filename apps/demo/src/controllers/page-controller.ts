import { Response, SocketController, type Request } from '@pkg/core';
import { HttpRoute } from '@pkg/decorators';
import { CHAT_PAGE_HEADERS, CHAT_PAGE_HTML, PAGE_SCRIPT_HEADERS, PAGE_SCRIPT_PATH } from '../page';

/**
 * Serves the chat page at `/` and its bundled script at `/chat.js`, from the same server and
 * port as the API and the WebSocket. Without a script (the demo run from its sources, not
 * built), `/chat.js` answers 404 with a script that says so on the page.
 */
export class PageController extends SocketController {
  readonly #script: string | undefined;

  constructor(script?: string) {
    super();
    this.#script = script;
  }

  @HttpRoute('GET', '/')
  page(_request: Request): Response {
    return Response.html(CHAT_PAGE_HTML, 200, { ...CHAT_PAGE_HEADERS });
  }

  @HttpRoute('GET', PAGE_SCRIPT_PATH)
  script(_request: Request): Response {
    if (this.#script !== undefined) {
      return Response.text(this.#script, 200, { ...PAGE_SCRIPT_HEADERS });
    }
    const missing =
      'document.getElementById("state").textContent = ' +
      '"The page script is not built: run the demo build (pnpm exec turbo run build --filter=@pkg/demo...).";';
    return Response.text(missing, 404, { ...PAGE_SCRIPT_HEADERS });
  }
}
