import { Response, SocketController, type Request } from '@pkg/core';
import { HttpRoute } from '@pkg/decorators';
import { DOC_PAGE_HEADERS, DOC_PAGE_HTML, DOC_PAGE_PATH, DOC_SCRIPT_PATH } from '../doc-page';
import { PAGE_SCRIPT_HEADERS } from '../page';

/**
 * Serves the shared document's page at `/doc` and its bundled script (with @pkg/client and
 * yjs inside) at `/doc.js`. Without a script (the demo run from its sources, not built),
 * `/doc.js` answers 404 with a script that says so on the page.
 */
export class DocPageController extends SocketController {
  readonly #script: string | undefined;

  constructor(script?: string) {
    super();
    this.#script = script;
  }

  @HttpRoute('GET', DOC_PAGE_PATH)
  page(_request: Request): Response {
    return Response.html(DOC_PAGE_HTML, 200, { ...DOC_PAGE_HEADERS });
  }

  @HttpRoute('GET', DOC_SCRIPT_PATH)
  script(_request: Request): Response {
    if (this.#script !== undefined) {
      return Response.text(this.#script, 200, { ...PAGE_SCRIPT_HEADERS });
    }
    const missing =
      'document.getElementById("doc-state").textContent = ' +
      '"The page script is not built: run the demo build (pnpm exec turbo run build --filter=@pkg/demo...).";';
    return Response.text(missing, 404, { ...PAGE_SCRIPT_HEADERS });
  }
}
