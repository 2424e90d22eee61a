import { Option, type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { resolve } from 'node:path';
import { errorText, KbsyncError } from '../../shared/errors.js';

/** The agent config options as commander parsed them (create and config take the same; config also --unset). */
export type AgentConfigOptions = {
  systemPrompt?: string;
  systemPromptFile?: string;
  temperature?: number;
  topK?: number;
  set?: [string, unknown][];
  unset?: string[];
};

/** The keys docs/api.md names in an agent's config; any other goes through --set KEY=VALUE. */
const KNOWN_KEYS = ['system_prompt', 'temperature', 'top_k'] as const;

/** Adds the options that set an agent's config keys (docs/api.md: system_prompt, temperature, top_k, others). */
export function addConfigOptions(cmd: Command): Command {
  return cmd
    .option('--system-prompt <text>', "the agent's system prompt (config.system_prompt)")
    .option('--system-prompt-file <file>', 'read the system prompt from a UTF-8 file (relative to the current folder)')
    .addOption(new Option('--temperature <n>', 'sampling temperature, 0 to 2 (config.temperature)').argParser(parseTemperature))
    .addOption(new Option('--top-k <n>', 'chunks retrieved per answer, 1 to 20 (config.top_k)').argParser(parseAgentTopK))
    .addOption(
      new Option('--set <key=value>', 'any other config key; VALUE is read as JSON when it parses, else as text (repeatable)').argParser(
        collectSetting,
      ),
    );
}

/**
 * The config keys the options set, in a fresh object: `{}` when no option was given. The system prompt
 * from --system-prompt-file is read here (relative to `cwd`); --system-prompt and the file together are refused.
 */
export function settingsOf(o: AgentConfigOptions, cwd: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of o.set ?? []) {
    if ((KNOWN_KEYS as readonly string[]).includes(key)) {
      throw new KbsyncError('usage', `--set ${key}=...: use --${key.replaceAll('_', '-')} for this key`);
    }
    out[key] = value;
  }
  if (o.systemPrompt !== undefined && o.systemPromptFile !== undefined) {
    throw new KbsyncError('usage', '--system-prompt and --system-prompt-file: give one of them');
  }
  if (o.systemPrompt !== undefined) out.system_prompt = o.systemPrompt;
  if (o.systemPromptFile !== undefined) out.system_prompt = readPromptFile(resolve(cwd, o.systemPromptFile), o.systemPromptFile);
  if (o.temperature !== undefined) out.temperature = o.temperature;
  if (o.topK !== undefined) out.top_k = o.topK;
  return out;
}

/**
 * The config to send for `agents config`: the agent's current config with `settings` over it and the
 * `unset` keys removed (the service's PUT replaces the whole config, so keys not named are kept by
 * sending them again), and whether that differs from the current one.
 */
export function mergedConfig(
  current: Readonly<Record<string, unknown>>,
  settings: Readonly<Record<string, unknown>>,
  unset: readonly string[],
): { config: Record<string, unknown>; changed: boolean } {
  const config: Record<string, unknown> = { ...current, ...settings };
  for (const key of unset) {
    if (key in settings) throw new KbsyncError('usage', `--unset ${key}: the same command also sets it`);
    delete config[key];
  }
  return { config, changed: !isDeepStrictEqual(config, current) };
}

/** Parses --temperature: a number from 0 to 2 (the service's range). */
export function parseTemperature(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 2)
    throw new KbsyncError('usage', `--temperature: a number from 0 to 2, got "${value}"`);
  return n;
}

/** Parses an agent's --top-k: a whole number from 1 to 20 (the service's limit). */
export function parseAgentTopK(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new KbsyncError('usage', `--top-k: a whole number from 1 to 20, got "${value}"`);
  return n;
}

/** Collects one --set KEY=VALUE: VALUE as JSON when it parses (0.5, true, {"a":1}, "x"), else the text itself. */
export function collectSetting(value: string, previous: [string, unknown][] | undefined): [string, unknown][] {
  const eq = value.indexOf('=');
  const key = eq < 0 ? '' : value.slice(0, eq).trim();
  if (!/^[A-Za-z_][\w.-]*$/.test(key))
    throw new KbsyncError('usage', `--set: KEY=VALUE with a key of letters, digits or _, got "${value}"`);
  const raw = value.slice(eq + 1);
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Not JSON: the text as given.
  }
  return [...(previous ?? []), [key, parsed]];
}

/** Collects a repeatable option's values. */
export function collectKey(value: string, previous: string[] | undefined): string[] {
  if (value.trim() === '') throw new KbsyncError('usage', '--unset: give a config key');
  return [...(previous ?? []), value.trim()];
}

function readPromptFile(path: string, given: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KbsyncError('usage', `--system-prompt-file ${given}: cannot read it (${errorText(err)})`, { cause: err });
  }
  if (text.trim() === '') throw new KbsyncError('usage', `--system-prompt-file ${given}: the file is empty`);
  return text;
}
