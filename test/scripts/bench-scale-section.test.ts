import { describe, expect, it } from 'vitest';
import { info } from '../../bench/figure.js';
import { machineFacts } from '../../bench/machine.js';
import { renderScaleSection, scaleSectionOf, withScaleSection } from '../../bench/scale-report.js';

const section = (value: number): string =>
  renderScaleSection([info('Scale tier', 'a figure', value, 'ms')], {
    machine: machineFacts(),
    command: 'npm run bench -- --scale',
    base: '/tmp/x',
    durationS: 1,
  });

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
});
