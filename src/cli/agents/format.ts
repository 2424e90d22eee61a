import type { Agent, DatasetMode } from '../../client/index.js';
import { columns, fields } from '../../sync/report/columns.js';

/** An agent as `--json` prints it: the client's fields (config as the service keeps it). */
export function agentJson(a: Agent): Record<string, unknown> {
  return { id: a.id, name: a.name, config: a.config, createdAt: a.createdAt, ...(a.datasets === null ? {} : { datasets: a.datasets }) };
}

/** `agents list` for people: one row per agent, its config keys in short. */
export function formatAgentList(agents: readonly Agent[]): string[] {
  if (agents.length === 0) return ['no agents yet: create one with `kbsync agents create NAME` (5 credits)'];
  const rows = agents.map((a) => [a.id, a.name ?? '-', a.createdAt ?? '-', configSummary(a.config)]);
  return columns([['ID', 'NAME', 'CREATED', 'CONFIG'], ...rows], ['right', 'left', 'left', 'left']);
}

/** `agents show` (and create, config) for people: the agent, its config keys, and its datasets when known. */
export function formatAgent(a: Agent): string[] {
  const lines = [
    `agent ${a.name ?? '(no name)'}`,
    ...fields([
      ['id', a.id],
      ['created', a.createdAt ?? '-'],
    ]),
  ];
  const keys = Object.keys(a.config);
  lines.push(
    '  config:',
    ...(keys.length === 0
      ? ['    (none: the service defaults)']
      : fields(
          keys.map((k) => [k, configValue(a.config[k])]),
          '    ',
        )),
  );
  if (a.datasets !== null) {
    lines.push('  datasets:', ...(a.datasets.length === 0 ? ['    (none)'] : a.datasets.map((d) => `    ${d.id}  ${d.mode}`)));
  }
  return lines;
}

/** `agents datasets AGENT` for people: the attached datasets with their modes. */
export function formatAttachments(label: string, datasets: readonly { id: string; name: string | null; mode: DatasetMode }[]): string[] {
  if (datasets.length === 0) return [`agent ${label} is attached to no dataset this key sees`];
  const rows = datasets.map((d) => [d.id, d.name ?? '-', d.mode]);
  return [`agent ${label}:`, ...columns([['DATASET', 'NAME', 'MODE'], ...rows], ['right', 'left', 'left']).map((l) => `  ${l}`)];
}

function configSummary(config: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(config).map(([k, v]) => (k === 'system_prompt' ? k : `${k}=${shorten(configValue(v), 24)}`));
  return parts.length === 0 ? '-' : parts.join(', ');
}

function configValue(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return shorten(text.replaceAll('\n', ' '), 200);
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
