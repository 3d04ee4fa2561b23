// HTTP POST JSON echo: the body is parsed and sent back.
import { httpWorkloads } from '../lib/http-load.mjs';

const body = JSON.stringify({ name: 'bench', n: 42, tags: ['a', 'b'], nested: { ok: true } });

export default httpWorkloads({
  name: 'http-post',
  title: 'HTTP POST JSON echo',
  order: 44,
  about: `\`POST /echo\` with a ${Buffer.byteLength(body)}-byte JSON body (content-type application/json) answers the parsed body re-serialised.`,
  request: { path: '/echo', method: 'POST', body },
});
