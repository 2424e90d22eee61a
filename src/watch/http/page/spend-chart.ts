import { count, esc } from './html.js';

/**
 * Credits per UTC day as an inline SVG bar chart against the day cap (a dashed line), with the figures
 * also in a table for screen readers and for those who would rather read them.
 */
export function spendChart(days: readonly { day: string; credits: number }[], dayCap: number): string {
  const width = 600;
  const height = 160;
  const most = Math.max(1, ...days.map((d) => d.credits));
  // A cap far above the spend would flatten every bar: then the chart is scaled to the spend and says so.
  const capShown = dayCap <= most * 2;
  const top = capShown ? Math.max(most, dayCap) : most * 1.1;
  const barW = width / Math.max(1, days.length);
  const y = (v: number): number => height - (v / top) * (height - 10);
  const bars = days
    .map((d, i) => {
      const h = height - y(d.credits);
      const cls = d.credits > dayCap ? 'bar over' : 'bar';
      return `<rect class="${cls}" x="${(i * barW + 1).toFixed(1)}" y="${y(d.credits).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}"><title>${esc(d.day)}: ${count(d.credits)} credits</title></rect>`;
    })
    .join('');
  const capY = y(dayCap).toFixed(1);
  const total = days.reduce((sum, d) => sum + d.credits, 0);
  const label = `Credits spent per day over the last ${days.length} days: ${count(total)} in all; the day cap is ${count(dayCap)}.`;
  const rows = days
    .filter((d) => d.credits > 0)
    .map((d) => `<tr><td>${esc(d.day)}</td><td class="num">${count(d.credits)}</td></tr>`)
    .join('');
  return (
    `<svg class="chart" viewBox="0 0 ${width} ${height}" preserveAspectRatio="none" role="img" aria-label="${esc(label)}">` +
    `${bars}${capShown ? `<line class="cap" x1="0" x2="${width}" y1="${capY}" y2="${capY}"/>` : ''}</svg>` +
    `<p class="chart-legend">${esc(label)} ${capShown ? 'The dashed line is the day cap.' : 'The day cap is above the top of the chart.'}</p>` +
    `<details><summary>Figures per day</summary>${
      rows === ''
        ? '<p>No credits spent in these days.</p>'
        : `<table><thead><tr><th scope="col">UTC day</th><th scope="col" class="num">credits</th></tr></thead><tbody>${rows}</tbody></table>`
    }</details>`
  );
}
