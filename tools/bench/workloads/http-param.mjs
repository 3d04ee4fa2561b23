// HTTP GET with a path parameter: the router extracts `{id}`.
import { httpWorkloads } from '../lib/http-load.mjs';

export default httpWorkloads({
  name: 'http-param',
  title: 'HTTP GET with a path parameter',
  order: 42,
  about: '`GET /users/42` on the route `/users/{id}` answers `{"id":"42"}`.',
  request: { path: '/users/42' },
});
