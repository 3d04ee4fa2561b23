// HTTP GET JSON: a fixed JSON document.
import { httpWorkloads } from '../lib/http-load.mjs';

export default httpWorkloads({
  name: 'http-get',
  title: 'HTTP GET JSON',
  order: 40,
  about: '`GET /json` answers `{"hello":"world"}`.',
  request: { path: '/json' },
});
