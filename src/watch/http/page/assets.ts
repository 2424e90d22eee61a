/*
 * The page's one script and one stylesheet, served by the daemon from these strings (built into the
 * package: no CDN, no other origin). The script only listens: no inline handler exists for the CSP to allow.
 */

export const PAGE_SCRIPT = `'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  let csrf = document.querySelector('meta[name="kbsync-csrf"]').content;
  const live = $('live');
  const pid = live.dataset.pid;
  const started = live.dataset.started;
  const say = (kind, text) => {
    live.replaceChildren();
    const b = document.createElement('span');
    b.className = 'badge ' + kind;
    b.textContent = ({ ok: '\\u2713 ', warn: '! ', bad: '\\u2715 ' })[kind] + text;
    live.append(b);
  };
  const post = (path, body) =>
    fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-kbsync-csrf': csrf }, body: JSON.stringify(body) })
      .then((r) => r.json().then((j) => ({ ok: r.ok, body: j })));
  let stopped = false;
  const events = new EventSource('/api/events');
  events.addEventListener('hello', (e) => {
    const h = JSON.parse(e.data);
    csrf = h.csrf;
    if (String(h.pid) !== pid || h.startedAt !== started) say('warn', 'daemon restarted at ' + h.startedAt + ' (pid ' + h.pid + ')');
    else say('ok', stopped ? 'running again' : 'running, live');
    stopped = false;
  });
  events.addEventListener('regions', (e) => {
    const regions = JSON.parse(e.data);
    for (const id of Object.keys(regions)) {
      const el = $(id);
      if (el === null) continue;
      const heading = el.querySelector('h2');
      el.innerHTML = regions[id];
      const h2 = el.querySelector('h2');
      if (h2 !== null && heading !== null) h2.id = heading.id;
    }
  });
  events.addEventListener('stopping', () => {
    stopped = true;
    say('bad', 'daemon stopped: the figures below are from before; this page reconnects when it runs again');
  });
  events.onerror = () => {
    if (!stopped) say('bad', 'daemon stopped or not answering: reconnecting');
    stopped = true;
  };
  const explain = (path) => {
    const out = $('explain-out');
    out.textContent = 'explaining ' + path + '...';
    fetch('/api/explain?path=' + encodeURIComponent(path))
      .then((r) => r.json())
      .then((j) => (out.textContent = j.text || j.hint || j.error))
      .catch((err) => (out.textContent = 'could not ask the daemon: ' + err));
  };
  $('explain-form').addEventListener('submit', (e) => {
    e.preventDefault();
    explain($('explain-path').value.trim());
  });
  document.addEventListener('click', (e) => {
    const r = e.target.closest('.retry-this');
    if (r !== null) {
      r.disabled = true;
      post('/api/retry', { source: r.dataset.source, path: r.dataset.path }).then(
        ({ body }) => ($('action-out').textContent = r.dataset.source + '/' + r.dataset.path + ': ' + (body.message || body.hint || body.error)),
        (err) => ($('action-out').textContent = 'could not ask the daemon: ' + err),
      );
      return;
    }
    const t = e.target.closest('.explain-this');
    if (t === null) return;
    $('explain-path').value = t.dataset.path;
    explain(t.dataset.path);
    $('explain-out').focus();
  });
  $('query-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const out = $('query-out');
    out.textContent = 'searching (1 credit)...';
    post('/api/query', { text: $('query-text').value }).then(({ ok, body }) => {
      out.replaceChildren();
      const p = document.createElement('p');
      if (!ok) {
        p.textContent = body.message || body.hint || body.error;
        out.append(p);
        return;
      }
      const n = body.results.length;
      p.textContent = n + (n === 1 ? ' result' : ' results') + '; today ' + body.credits.day + ' of ' + body.credits.caps.day + ' credits spent.';
      const ol = document.createElement('ol');
      for (const r of body.results) {
        const li = document.createElement('li');
        const name = document.createElement('code');
        name.textContent = r.source ? r.source + '/' + r.path : r.knowledgeSourceId;
        const text = document.createElement('p');
        text.textContent = r.text;
        li.append(name, ' score ' + r.score.toFixed(3), text);
        ol.append(li);
      }
      out.append(p, ol);
    }, (err) => (out.textContent = 'could not ask the daemon: ' + err));
  });
  $('rescan-form').addEventListener('submit', (e) => {
    e.preventDefault();
    post('/api/rescan', {}).then(({ body }) => ($('action-out').textContent = body.message || body.error));
  });
})();
`;

export const PAGE_STYLE = `:root { color-scheme: light dark; --bg: #f7f7f5; --fg: #1b1b1b; --muted: #5a5a5a; --card: #fff; --line: #d5d5d0;
  --ok: #17643a; --warn: #7a4d00; --bad: #a3161c; --info: #1e4f99; --bar: #3d6fb6; --over: #a3161c; --focus: #1e4f99; }
@media (prefers-color-scheme: dark) { :root { --bg: #121314; --fg: #ececea; --muted: #b0b0ab; --card: #1c1d1f; --line: #3a3b3e;
  --ok: #6fd59a; --warn: #f0c060; --bad: #ff8a8f; --info: #8fb8ff; --bar: #7ea6e6; --over: #ff8a8f; --focus: #8fb8ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; background: var(--bg); color: var(--fg); }
header, main { max-width: 1200px; margin: 0 auto; padding: 0 12px; }
h1 { font-size: 1.4rem; margin: 14px 0 4px; } h2 { font-size: 1.15rem; margin: 0 0 8px; } h3 { font-size: 1rem; margin: 12px 0 4px; }
main { display: grid; gap: 12px; grid-template-columns: repeat(auto-fit, minmax(min(100%, 520px), 1fr)); padding-bottom: 24px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 12px; min-width: 0; }
#sources, #attention, #activity { grid-column: 1 / -1; }
.scroll { overflow-x: auto; } table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); } .small { font-size: 0.88rem; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; background: var(--bg); padding: 8px; border-radius: 4px; min-height: 1em; }
.badge { font-weight: 600; white-space: nowrap; } .ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); } .info { color: var(--info); }
dl.figures, dl.facts { margin: 0 0 8px; } dl div { display: flex; flex-wrap: wrap; gap: 0 8px; padding: 2px 0; }
dt { font-weight: 600; min-width: 9em; } dd { margin: 0; } dd ul { margin: 0; padding-left: 18px; }
.chart { width: 100%; height: 160px; display: block; border-bottom: 1px solid var(--line); }
.chart .bar { fill: var(--bar); } .chart .bar.over { fill: var(--over); } .chart .cap { stroke: var(--bad); stroke-width: 2; stroke-dasharray: 6 4; }
.chart-legend { font-size: 0.88rem; }
form { margin: 8px 0; } label { display: block; font-weight: 600; margin-bottom: 4px; }
.row { display: flex; gap: 8px; flex-wrap: wrap; } input { flex: 1 1 14em; min-width: 0; }
input, button { font: inherit; padding: 6px 10px; border-radius: 4px; border: 1px solid var(--line); background: var(--card); color: var(--fg); }
button { cursor: pointer; border-color: var(--info); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 12px; top: 8px; background: var(--card); padding: 4px 8px; }
`;

export const PAGE_ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1e4f99"/><path d="M4 8.5l2.5 2.5L12 5" stroke="#fff" stroke-width="2" fill="none"/></svg>\n';
