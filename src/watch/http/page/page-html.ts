import { badge, count, esc, when } from './html.js';
import type { PageModel } from './page-model.js';
import { spendChart } from './spend-chart.js';

/** The page's live regions, each re-rendered from the model and sent whole when it changed. */
export const REGIONS = ['now', 'sources', 'money', 'health', 'attention', 'activity'] as const;
export type Region = (typeof REGIONS)[number];

/** A table in a box that scrolls sideways on a narrow screen (focusable, so that a keyboard can scroll it). */
const table = (label: string, head: string[], rows: string[], numeric: number[] = []): string =>
  `<div class="scroll" tabindex="0" role="region" aria-label="${esc(label)}"><table><thead><tr>${head.map((h, i) => `<th scope="col"${numeric.includes(i) ? ' class="num"' : ''}>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;

function now(m: PageModel): string {
  const state = m.now.syncing ? badge('info', 'syncing') : m.daemon.ready ? badge('ok', 'idle') : badge('info', 'starting: first sync');
  const waits = m.now.waitingFor.map((w) => `<li>${esc(w)}</li>`).join('');
  const remote =
    m.now.remote === null
      ? ''
      : `<p>${count(m.now.remote.processing)} copies still processing on the service; next listing ${when(m.now.remote.nextListingAt)}.</p>`;
  const c = m.now.cycle;
  const cycle =
    c === null
      ? ''
      : `<p id="cycle-progress">A sync cycle runs for ${esc(c.reasons.join(', '))} (since ${when(c.startedAt)}): ` +
        `${c.total === 0 ? 'planning, no paid call yet' : `${count(c.done)} of ${count(c.total)} paid calls done`}, ${count(c.creditsSoFar)} credits so far` +
        `${c.etaAt === null ? '' : `; the rate limit (upload.requestsPerSecond) has it end about ${when(c.etaAt)}`}.</p>`;
  return `<h2>Now</h2><p class="state">${state}</p>${cycle}${remote}<h3>Waiting for</h3>${waits === '' ? '<p>nothing</p>' : `<ul>${waits}</ul>`}`;
}

function sources(m: PageModel): string {
  const rows = m.sources.map((s) => {
    const skipped = s.skipped.length === 0 ? '0' : s.skipped.map((k) => `${count(k.files)} ${esc(k.reason)}`).join(', ');
    return (
      `<tr><th scope="row">${esc(s.name)}<div class="muted small">${esc(s.where)}</div></th><td>${esc(s.watch)}</td>` +
      `<td class="num">${count(s.tracked)}</td><td class="num">${count(s.processed)}</td><td class="num">${count(s.processing)}</td>` +
      `<td class="num">${s.failed > 0 ? badge('bad', count(s.failed)) : '0'}</td><td class="num">${count(s.deferred)}</td>` +
      `<td>${skipped}</td><td>${when(s.lastChange)}</td></tr>`
    );
  });
  return `<h2>Sources</h2>${table(
    'sources',
    ['source', 'watched by', 'tracked', 'processed', 'processing', 'failed', 'deferred', 'skipped', 'last change'],
    rows,
    [2, 3, 4, 5, 6],
  )}`;
}

function money(m: PageModel): string {
  const x = m.money;
  const deferred =
    x.deferred === null || x.deferred.files === 0
      ? '<p>Nothing is deferred for the budget.</p>'
      : `<p>${badge('warn', `${count(x.deferred.files)} deferred`)} for the budget; waits for ${esc(x.deferred.waitsFor.join(', '))}.</p>`;
  return (
    `<h2>Money</h2><dl class="figures">` +
    `<div><dt>Today (UTC)</dt><dd id="spend-day">${count(x.day)} of ${count(x.dayCap)} credits</dd></div>` +
    `<div><dt>This month</dt><dd>${count(x.month)} of ${count(x.monthCap)} credits</dd></div>` +
    `<div><dt>Run cap</dt><dd>${count(x.runCap)} credits a sync</dd></div>` +
    `<div><dt>Balance</dt><dd id="balance">${
      x.balance === null
        ? 'not reported yet (the service says it when the daemon checks the target)'
        : `${count(x.balance.credits)} credits left, as the service said ${when(x.balance.at)}`
    }</dd></div></dl>` +
    `${deferred}${spendChart(x.days, x.dayCap)}`
  );
}

function health(m: PageModel): string {
  const h = m.health;
  const t = h.target;
  const target = t.reachable
    ? badge('ok', 'reachable')
    : `${badge('bad', 'unreachable')} since ${when(t.unreachableSince)}: ${esc(t.lastError ?? '')}; ${count(t.changesWaiting)} changes waiting`;
  const reload = h.config.last;
  const watches = h.watches
    .map((w) => `<li>${esc(w.source)}: ${esc(w.backend)}${w.note === null ? '' : ` (${esc(w.note)})`}</li>`)
    .join('');
  return (
    `<h2>Target and daemon</h2><dl class="facts">` +
    `<div><dt>Service</dt><dd>${target}</dd></div>` +
    `<div><dt>Last error</dt><dd>${h.lastError === null ? 'none' : `${when(h.lastError.at)}: ${esc(h.lastError.message)}`}</dd></div>` +
    `<div><dt>Last good sync</dt><dd>${when(h.lastSuccessAt)}</dd></div>` +
    `<div><dt>Outbox</dt><dd>${count(h.outbox.pending)} pending, ${count(h.outbox.unknown)} unknown</dd></div>` +
    `<div><dt>Watchers</dt><dd>${watches === '' ? 'none' : `<ul>${watches}</ul>`} ${count(h.counters.watcherErrors)} errors, ${count(h.counters.watchRepairs)} repairs</dd></div>` +
    `<div><dt>Daemon</dt><dd>kbsync ${esc(m.daemon.version)}, pid ${m.daemon.pid}, up since ${when(m.daemon.startedAt)}</dd></div>` +
    `<div><dt>Config</dt><dd><code>${esc(m.daemon.configPath)}</code>; last reload: ${
      reload === null
        ? 'none'
        : `${when(reload.at)} (${esc(reload.trigger)}) ${esc(reload.outcome)}${reload.errors.length > 0 ? `: ${esc(reload.errors.join('; '))}` : ''}`
    }</dd></div></dl>`
  );
}

function attention(m: PageModel): string {
  if (m.attention.length === 0) return `<h2>Needs attention</h2><p>${badge('ok', 'nothing')} needs attention.</p>`;
  const rows = m.attention.map(
    (a) =>
      `<tr><td>${badge(a.what === 'failed' ? 'bad' : 'warn', a.what)}</td><th scope="row"><code>${esc(`${a.source}/${a.path}`)}</code></th><td>${esc(a.reason)}${a.next === null ? '' : `<div class="small">${esc(a.next)}</div>`}</td>` +
      `<td><button type="button" class="explain-this" data-path="${esc(`${a.source}/${a.path}`)}">Explain</button>` +
      `${a.retry === null ? '' : ` <button type="button" class="retry-this" data-source="${esc(a.source)}" data-path="${esc(a.path)}">Retry (${count(a.retry.credits)} credits)</button>`}</td></tr>`,
  );
  const more = m.attentionMore > 0 ? `<p>and ${count(m.attentionMore)} more (all: <code>kbsync audit</code>).</p>` : '';
  return `<h2>Needs attention</h2>${table('files that need attention', ['state', 'file', 'why', ''], rows)}${more}`;
}

function activity(m: PageModel): string {
  const cycles = m.cycles.map(
    (c) =>
      `<tr><td>${when(c.at)}</td><td>${esc(c.reasons.join(', '))}</td><td>${esc(c.status)}</td><td class="num">${count(c.uploaded)}</td>` +
      `<td class="num">${count(c.deferred)}</td><td class="num">${count(c.failed)}</td><td class="num">${count(c.creditsSpent)}</td></tr>`,
  );
  const files = m.recent.map(
    (f) =>
      `<tr><td>${when(f.at)}</td><th scope="row"><code>${esc(`${f.source}/${f.path}`)}</code></th><td>${esc(f.action)}</td><td>${esc(f.remoteStatus ?? '')}</td><td>${esc(f.reason)}</td></tr>`,
  );
  return (
    `<h2>Recent activity</h2><h3>Sync cycles</h3>${cycles.length === 0 ? '<p>none yet</p>' : table('sync cycles', ['ended', 'why', 'status', 'uploads', 'deferred', 'failed', 'credits'], cycles, [3, 4, 5, 6])}` +
    `<h3>Files that moved last</h3>${files.length === 0 ? '<p>none yet</p>' : table('files that moved last', ['when', 'file', 'action', 'remote', 'reason'], files)}`
  );
}

const RENDER: Record<Region, (m: PageModel) => string> = { now, sources, money, health, attention, activity };

export function renderRegion(region: Region, m: PageModel): string {
  return RENDER[region](m);
}

/** The whole page: the regions rendered now, the forms, and the one script and stylesheet. */
export function renderPage(m: PageModel, o: { csrf: string }): string {
  const regions = REGIONS.map((r) => `<section id="${r}" class="card" aria-labelledby="${r}-h">${renderRegion(r, m)}</section>`)
    .join('')
    .replace(
      /<section id="(\w+)" class="card" aria-labelledby="\w+-h"><h2>/g,
      '<section id="$1" class="card" aria-labelledby="$1-h"><h2 id="$1-h">',
    );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="kbsync-csrf" content="${esc(o.csrf)}">
<title>kbsync watch</title><link rel="icon" href="/assets/icon.svg"><link rel="stylesheet" href="/assets/page.css"><script src="/assets/page.js" defer></script></head>
<body><a class="skip" href="#main">Skip to the content</a>
<header><h1>kbsync watch</h1><p id="live" role="status" aria-live="polite" data-pid="${m.daemon.pid}" data-started="${esc(m.daemon.startedAt)}">${badge('ok', 'running')} page made ${when(m.generatedAt)}</p></header>
<main id="main">${regions}
<section id="tools" class="card" aria-labelledby="tools-h"><h2 id="tools-h">Explain, search, act</h2>
<form id="explain-form" action="/api/explain" method="get"><label for="explain-path">Explain a path (free)</label>
<div class="row"><input id="explain-path" name="path" required placeholder="docs/guide.md" autocomplete="off"><button type="submit">Explain</button></div></form>
<pre id="explain-out" tabindex="-1" aria-live="polite"></pre>
<form id="query-form" action="/api/query" method="post"><label for="query-text">Ask the dataset</label>
<p id="query-price" class="small">A search costs 1 credit, counted in today's spend.</p>
<div class="row"><input id="query-text" name="text" required autocomplete="off" aria-describedby="query-price"><button type="submit">Search (1 credit)</button></div></form>
<div id="query-out" aria-live="polite"></div>
<form id="rescan-form" action="/api/rescan" method="post"><p class="small">A rescan walks every source now (free: it only pays for what changed).</p><button type="submit">Rescan now</button></form>
<p id="action-out" role="status"></p>
</section></main></body></html>
`;
}
