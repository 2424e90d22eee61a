import { describe, expect, it } from 'vitest';
import { info } from '../../bench/figure.js';
import { machineFacts } from '../../bench/machine.js';
import { renderScaleSection, scaleSectionOf, withScaleSection, type ScaleRun } from '../../bench/scale-report.js';

const run = (key: string, name: string, value: number): ScaleRun => ({
  key,
  label: `the ${key} group`,
  command: `npm run bench -- --scale=${key}`,
  machine: machineFacts(),
  durationS: 1,
  figures: [info('Scale tier', name, value, 'ms')],
});
const section = (value: number): string => renderScaleSection([run('memory', 'a figure', value)], '/tmp/x');

describe('the scale tier section of docs/benchmarks.md', () => {
  it('replaces its own section and keeps the normal tier above it', () => {
    const normal = '# Benchmarks\n\n## kbsync plan\n\n| a normal figure |\n';
    const once = withScaleSection(normal, section(111));
    const twice = withScaleSection(once, section(222));
    expect(twice.startsWith(normal.trimEnd())).toBe(true);
    expect(twice).toContain('| a figure | 222 ms |');
    expect(twice).not.toContain('111 ms');
    expect(twice.match(/## Scale tier/g)).toHaveLength(1);
  });

  it('is found again in a rewritten document, which the normal tier carries over', () => {
    const doc = withScaleSection('# Benchmarks\n', section(333));
    const kept = scaleSectionOf(doc);
    expect(kept).toContain('| a figure | 333 ms |');
    expect(scaleSectionOf(`# Benchmarks rewritten\n\n${kept ?? ''}\n`)).toBe(kept);
    expect(scaleSectionOf('# Benchmarks\n')).toBeNull();
  });

  it("lists each group's last run with its figures, in the order given", () => {
    const text = renderScaleSection([run('unchanged', 'plan', 10), run('cold', 'cold plan', 20)], '/tmp/x');
    expect(text).toContain('- the unchanged group: `npm run bench -- --scale=unchanged` on ');
    expect(text).toContain('- the cold group: `npm run bench -- --scale=cold` on ');
    expect(text.indexOf('| plan | 10 ms |')).toBeGreaterThan(-1);
    expect(text.indexOf('| cold plan | 20 ms |')).toBeGreaterThan(text.indexOf('| plan | 10 ms |'));
  });
});
