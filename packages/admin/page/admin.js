// The admin page's script: plain browser JavaScript, no framework and no build step. It
// polls the visible view only (one page of data per request), pauses while the tab is
// hidden, and writes every value with textContent (never as HTML).
/* global sessionStorage, location, performance, history, Node */
'use strict';

(function () {
  const api = location.pathname.replace(/\/+$/, '') + '/api/';
  const state = {
    view: 'nodes',
    token: sessionStorage.getItem('pkg-admin-token') || '',
    session: null,
    sessionAsked: null,
    timer: 0,
    busy: false,
    again: false,
    // Per view: the cursor stack of the pages before, and the current and next cursors.
    pages: {},
    trace: { id: '', since: 0, rows: [] },
    presenceRoom: null,
  };

  const $ = (selector, root) => (root || document).querySelector(selector);
  const section = (view) => $('#view-' + view);

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function row(cells) {
    const tr = document.createElement('tr');
    for (const cell of cells) {
      const td = document.createElement('td');
      if (cell instanceof Node) td.appendChild(cell);
      else td.textContent = cell === undefined || cell === null ? '' : String(cell);
      tr.appendChild(td);
    }
    return tr;
  }

  function fill(tbody, rows) {
    tbody.replaceChildren(...rows);
  }

  function count(n) {
    return typeof n === 'number' ? n.toLocaleString('en-US') : n;
  }

  function bytes(n) {
    if (n < 1024) return n + ' B';
    if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
    return (n / 1024 / 1024).toFixed(1) + ' MiB';
  }

  function age(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  }

  function status(text, bad) {
    const node = $('#status');
    node.textContent = text;
    node.className = bad ? 'bad' : '';
  }

  function meta(view, data, extra) {
    const parts = [];
    if (data && typeof data.nodes === 'number') parts.push(data.nodes + ' node(s) answered');
    if (data && data.missing > 0) parts.push(data.missing + ' did not answer in time');
    if (data && data.errors && data.errors.length > 0) {
      parts.push(data.errors.map((e) => e.node + ': ' + e.error).join('; '));
    }
    if (extra) parts.push(extra);
    $('[data-meta]', section(view)).textContent = parts.join(' · ');
  }

  async function call(method, name, params, body) {
    const url = new URL(api + name, location.href);
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
    }
    const headers = { Accept: 'application/json' };
    if (state.token) headers.Authorization = 'Bearer ' + state.token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
    const data = await res.json().catch(() => ({}));
    if (res.status === 403 && data.code === 'PKG_ERR_ADMIN_FORBIDDEN') {
      $('#login').hidden = false;
      throw new Error('forbidden: enter the admin token');
    }
    if (!res.ok) throw new Error(data.message || data.error || 'HTTP ' + res.status);
    return data;
  }

  // What the server allows this operator (actions, page sizes): asked once, beside the
  // first view's data rather than before it.
  function session() {
    if (state.sessionAsked === null) {
      state.sessionAsked = call('GET', 'session').then(
        (s) => (state.session = s),
        (err) => {
          state.sessionAsked = null;
          throw err;
        },
      );
    }
    return state.sessionAsked;
  }

  function pageState(view) {
    if (!state.pages[view]) state.pages[view] = { before: [], cursor: null, next: null };
    return state.pages[view];
  }

  function tools(view) {
    const root = section(view);
    const search = $('[data-search]', root);
    const sort = $('[data-sort]', root);
    const limit = $('[data-limit]', root);
    return {
      search: search ? search.value.trim() : undefined,
      sort: sort ? sort.value : undefined,
      limit: limit ? limit.value : undefined,
    };
  }

  function pager(view, next) {
    const p = pageState(view);
    p.next = next;
    const root = section(view);
    $('[data-prev]', root).disabled = p.before.length === 0;
    $('[data-next]', root).disabled = next === null;
  }

  // ------------------------------------------------------------------ the views

  const views = {
    async nodes() {
      const data = await call('GET', 'nodes');
      fill(
        $('tbody', section('nodes')),
        data.rows.map((n) =>
          row([
            n.node,
            n.pid,
            count(n.connections),
            count(n.openClients),
            count(n.sessions),
            count(n.rooms),
            count(n.historyRooms),
            count(n.pendingHandlers),
            Math.round(n.eventLoopUtilization * 100) + ' %',
            bytes(n.rssBytes),
            bytes(n.heapUsedBytes),
            age(n.uptimeSeconds * 1000),
            n.adapter,
          ]),
        ),
      );
      const total = data.rows.reduce((sum, n) => sum + n.connections, 0);
      meta('nodes', data, count(total) + ' connection(s) in all');
    },

    async connections() {
      const p = pageState('connections');
      const t = tools('connections');
      const data = await call('GET', 'connections', {
        search: t.search,
        sort: t.sort,
        limit: t.limit,
        cursor: p.cursor,
      });
      const now = Date.now();
      const actions = (await session()).actions;
      fill(
        $('tbody', section('connections')),
        data.rows.map((c) => {
          const buttons = el('span');
          const trace = el('button', 'trace');
          trace.type = 'button';
          trace.addEventListener('click', () => startTrace(c.id));
          buttons.appendChild(trace);
          if (actions.disconnect) {
            const cut = el('button', 'disconnect', 'danger');
            cut.type = 'button';
            cut.addEventListener('click', () =>
              act('disconnect', { id: c.id }, 'Disconnect ' + c.id + '?'),
            );
            buttons.appendChild(cut);
          }
          if (actions.revoke && c.identity) {
            const revoke = el('button', 'revoke', 'danger');
            revoke.type = 'button';
            revoke.addEventListener('click', () =>
              act(
                'revoke',
                { identity: c.identity },
                'Revoke ' + c.identity + ' on every instance?',
              ),
            );
            buttons.appendChild(revoke);
          }
          const rooms = c.rooms.map((r) => (r.namespace === '/' ? '' : r.namespace + ' ') + r.room);
          if (c.roomCount > c.rooms.length) rooms.push('+' + (c.roomCount - c.rooms.length));
          return row([
            c.id,
            c.node,
            c.identity,
            c.address,
            c.state,
            c.version,
            age(now - c.connectedAt),
            bytes(c.bytesIn),
            bytes(c.bytesOut),
            rooms.join(', '),
            buttons,
          ]);
        }),
      );
      pager('connections', data.next);
      meta('connections', data, count(data.total) + ' match(es), page ' + (p.before.length + 1));
    },

    async rooms() {
      await roomList('rooms', 'all', (r) => [
        r.namespace,
        r.room,
        r.members,
        r.instances,
        r.presence ? r.presence.connections + ' / ' + r.presence.keys + ' keys' : '',
      ]);
    },

    async presence() {
      await roomList('presence', 'presence', (r) => {
        const show = el('button', 'members');
        show.type = 'button';
        show.addEventListener('click', () => {
          state.presenceRoom = { room: r.room, namespace: r.namespace };
          refresh();
        });
        return [r.namespace, r.room, r.presence.connections, r.presence.keys, show];
      });
      const detail = $('[data-detail]', section('presence'));
      if (state.presenceRoom === null) {
        detail.hidden = true;
        return;
      }
      const data = await call('GET', 'presence', state.presenceRoom);
      detail.hidden = false;
      $('[data-detail-title]', detail).textContent =
        data.namespace + ' ' + data.room + ': ' + data.keys + ' key(s)';
      fill(
        $('tbody', detail),
        data.entries.map((e) => row([e.key, e.metas.length, JSON.stringify(e.metas)])),
      );
    },

    async history() {
      await roomList('history', 'history', (r) => [
        r.namespace,
        r.room,
        r.members,
        r.history.kept,
        bytes(r.history.bytes),
        r.history.complete ? 'yes' : 'older ones exist',
      ]);
    },

    async refusals() {
      const data = await call('GET', 'refusals');
      const root = section('refusals');
      const nodes = data.rows.map((n) => n.node);
      const head = (table, first) => {
        const tr = $('[data-' + table + '] thead tr', root);
        tr.replaceChildren(...[first, ...(table === 'totals' ? ['all nodes'] : []), ...nodes].map((t) => el('th', t))); // prettier-ignore
      };
      head('totals', 'code');
      head('limits', 'setting');
      const codes = Object.entries(data.total).sort((a, b) => b[1] - a[1]);
      fill(
        $('[data-totals] tbody', root),
        codes.length === 0
          ? [row(['none', 0, ...nodes.map(() => 0)])]
          : codes.map(([code, n]) =>
              row([code, n, ...data.rows.map((r) => r.refusals[code] || 0)]),
            ),
      );
      const settings = data.rows.length > 0 ? Object.keys(data.rows[0].limits) : [];
      fill($('[data-limits] tbody', root), [
        row(['connections now', ...data.rows.map((r) => count(r.connections))]),
        ...settings.map((key) =>
          row([
            key,
            ...data.rows.map((r) =>
              r.limits[key] === null || r.limits[key] === 0 ? 'no limit' : count(r.limits[key]),
            ),
          ]),
        ),
      ]);
      meta('refusals', data);
    },

    async trace() {
      const t = state.trace;
      if (!t.id) {
        meta('trace', null, 'Pick a connection (its trace button) or type its id.');
        return;
      }
      const data = await call('GET', 'trace', { id: t.id, since: t.since });
      for (const e of data.entries || []) {
        t.rows.push(e);
        t.since = e.seq;
      }
      const limit = (await session()).trace.maxMessages;
      if (t.rows.length > limit) t.rows.splice(0, t.rows.length - limit);
      fill(
        $('tbody', section('trace')),
        t.rows
          .slice()
          .reverse()
          .map((e) =>
            row([e.seq, new Date(e.at).toISOString().slice(11, 23), e.dir, e.bytes, e.text]),
          ),
      );
      const left = Math.max(0, (data.until || 0) - Date.now());
      meta(
        'trace',
        null,
        t.id +
          ' on ' +
          data.node +
          ': ' +
          (data.active ? 'tracing, ' + age(left) + ' left' : 'stopped') +
          (data.dropped ? ', ' + data.dropped + ' older dropped' : ''),
      );
    },

    async audit() {
      const data = await call('GET', 'audit');
      fill(
        $('tbody', section('audit')),
        data.entries.map((a) =>
          row([new Date(a.at).toISOString(), a.who, a.action, a.target, a.outcome]),
        ),
      );
      meta('audit', null, data.entries.length + ' action(s) asked on this node');
    },
  };

  async function roomList(view, only, cells) {
    const p = pageState(view);
    const t = tools(view);
    const data = await call('GET', 'rooms', {
      only,
      search: t.search,
      limit: t.limit,
      cursor: p.cursor,
    });
    fill(
      $('tbody', section(view)),
      data.rows.map((r) => row(cells(r))),
    );
    pager(view, data.next);
    meta(view, data, 'page ' + (p.before.length + 1));
  }

  async function startTrace(id) {
    state.trace = { id, since: 0, rows: [] };
    $('[data-trace-id]', section('trace')).value = id;
    try {
      await call('POST', 'trace', {}, { id, op: 'start' });
    } catch (err) {
      status(err.message, true);
    }
    show('trace');
  }

  async function act(action, body, question) {
    if (!window.confirm(question)) return;
    try {
      await call('POST', action, {}, body);
      status(action + ' done');
    } catch (err) {
      status(err.message, true);
    }
    refresh();
  }

  // ------------------------------------------------------------------ polling

  // One refresh at a time; a refresh asked meanwhile (a new view, a new page) runs after it.
  async function refresh() {
    if (state.busy) {
      state.again = true;
      return;
    }
    state.busy = true;
    const view = state.view;
    const started = performance.now();
    try {
      await Promise.all([session(), views[view]()]);
      $('#login').hidden = true;
      const ms = Math.round(performance.now() - started);
      status('updated ' + new Date().toLocaleTimeString() + ' (' + ms + ' ms)');
      if (state.view === view) document.body.dataset.loaded = view;
    } catch (err) {
      status(err.message, true);
    } finally {
      state.busy = false;
      if (state.again) {
        state.again = false;
        refresh();
      }
    }
  }

  function schedule() {
    clearInterval(state.timer);
    const every = Number($('#interval').value);
    if (every > 0) {
      state.timer = setInterval(() => {
        if (document.visibilityState === 'visible') refresh();
      }, every);
    }
  }

  function show(view) {
    state.view = view;
    for (const s of document.querySelectorAll('main > section')) s.hidden = s.dataset.view !== view;
    for (const b of document.querySelectorAll('#tabs button')) {
      b.classList.toggle('active', b.dataset.view === view);
    }
    history.replaceState(null, '', '#' + view);
    delete document.body.dataset.loaded;
    refresh();
  }

  function restart(view) {
    state.pages[view] = { before: [], cursor: null, next: null };
    refresh();
  }

  for (const b of document.querySelectorAll('#tabs button')) {
    b.addEventListener('click', () => show(b.dataset.view));
  }
  for (const s of document.querySelectorAll('main > section')) {
    const view = s.dataset.view;
    const search = $('[data-search]', s);
    let typing = 0;
    if (search) {
      search.addEventListener('input', () => {
        clearTimeout(typing);
        typing = setTimeout(() => restart(view), 250);
      });
    }
    for (const sel of s.querySelectorAll('[data-sort], [data-limit]')) {
      sel.addEventListener('change', () => restart(view));
    }
    const prev = $('[data-prev]', s);
    const next = $('[data-next]', s);
    if (prev) {
      prev.addEventListener('click', () => {
        const p = pageState(view);
        p.cursor = p.before.length > 0 ? p.before.pop() : null;
        refresh();
      });
    }
    if (next) {
      next.addEventListener('click', () => {
        const p = pageState(view);
        if (p.next === null) return;
        p.before.push(p.cursor);
        p.cursor = p.next;
        refresh();
      });
    }
  }
  $('[data-trace-start]').addEventListener('click', () => {
    const id = $('[data-trace-id]').value.trim();
    if (id) startTrace(id);
  });
  $('[data-trace-stop]').addEventListener('click', async () => {
    if (!state.trace.id) return;
    try {
      await call('POST', 'trace', {}, { id: state.trace.id, op: 'stop' });
    } catch (err) {
      status(err.message, true);
    }
    refresh();
  });
  $('#login').addEventListener('submit', (event) => {
    event.preventDefault();
    state.token = $('#token').value;
    sessionStorage.setItem('pkg-admin-token', state.token);
    state.session = null;
    state.sessionAsked = null;
    refresh();
  });
  $('#interval').addEventListener('change', schedule);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') refresh();
  });

  const first = location.hash.slice(1);
  show(views[first] ? first : 'nodes');
  schedule();
})();
