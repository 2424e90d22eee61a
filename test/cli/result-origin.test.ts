import { describe, expect, it } from 'vitest';
import { originLabel } from '../../src/cli/result-origin.js';

describe('originLabel (kbsync query and chat output)', () => {
  it('names the heading path and the rows a result came from, and nothing when the service told none', () => {
    expect(originLabel({ heading: 'Install > Linux', firstRow: null, lastRow: null })).toBe('  from "Install > Linux"');
    expect(originLabel({ heading: 'Sheet1', firstRow: 2, lastRow: 41 })).toBe('  from "Sheet1", rows 2-41');
    expect(originLabel({ heading: null, firstRow: 7, lastRow: 7 })).toBe('  row 7');
    expect(originLabel({ heading: null, firstRow: null, lastRow: null })).toBe('');
    expect(originLabel(undefined)).toBe('');
  });
});
