import { describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../shared/errors.js';
import { collectSetting, mergedConfig, parseTemperature, settingsOf } from './config-options.js';

const usageError = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (isKbsyncError(err, 'usage')) return err.message;
    throw err;
  }
  throw new Error('no usage error');
};

describe('agent config options', () => {
  it('--set KEY=VALUE reads VALUE as JSON when it parses, else as the text given; a bad key is a usage error', () => {
    let set = collectSetting('max_tokens=300', undefined);
    set = collectSetting('tone=dry', set);
    set = collectSetting('style={"lists":true}', set);
    set = collectSetting('quoted="42"', set);
    set = collectSetting('empty=', set);

    expect(set).toEqual([
      ['max_tokens', 300],
      ['tone', 'dry'],
      ['style', { lists: true }],
      ['quoted', '42'],
      ['empty', ''],
    ]);
    expect(usageError(() => collectSetting('no-equals', undefined))).toMatch(/--set: KEY=VALUE/);
    expect(usageError(() => collectSetting('=1', undefined))).toMatch(/--set: KEY=VALUE/);
  });

  it('settingsOf: the options as config keys; the known keys only through their own options; one prompt option at a time', () => {
    expect(settingsOf({ systemPrompt: 'p', temperature: 0, topK: 20, set: [['x', 1]] }, '/')).toEqual({
      system_prompt: 'p',
      temperature: 0,
      top_k: 20,
      x: 1,
    });
    expect(settingsOf({}, '/')).toEqual({});
    expect(usageError(() => settingsOf({ set: [['top_k', 3]] }, '/'))).toBe('--set top_k=...: use --top-k for this key');
    expect(usageError(() => settingsOf({ systemPrompt: 'a', systemPromptFile: 'b' }, '/'))).toMatch(/give one of them/);
    expect(usageError(() => settingsOf({ systemPromptFile: 'missing.txt' }, '/nonexistent-dir'))).toMatch(
      /--system-prompt-file missing.txt: cannot read it/,
    );
  });

  it('mergedConfig keeps the keys not named, drops the unset ones, and says when nothing changes', () => {
    const current = { system_prompt: 'p', top_k: 3, tone: 'dry' };

    expect(mergedConfig(current, { top_k: 5 }, ['tone'])).toEqual({ config: { system_prompt: 'p', top_k: 5 }, changed: true });
    expect(mergedConfig(current, { top_k: 3 }, ['absent'])).toEqual({ config: current, changed: false });
    expect(mergedConfig({ s: { a: 1 } }, { s: { a: 1 } }, [])).toMatchObject({ changed: false });
    expect(usageError(() => mergedConfig(current, { tone: 'x' }, ['tone']))).toMatch(/--unset tone: the same command also sets it/);
  });

  it('--temperature: 0 to 2', () => {
    expect(parseTemperature('0')).toBe(0);
    expect(parseTemperature('2')).toBe(2);
    for (const bad of ['', ' ', '-0.1', '2.01', 'warm', 'NaN']) expect(usageError(() => parseTemperature(bad))).toMatch(/--temperature/);
  });
});
