import { describe, expect, it } from 'vitest';
import { paceLine } from './pace.js';

describe('paceLine', () => {
  it('says how long the paid calls take at the rate, past 10 s', () => {
    expect(paceLine(2000, 5)).toEqual({ seconds: 400, line: '2,000 uploads at 5/s: about 7 min' });
    expect(paceLine(24, 2)).toEqual({ seconds: 12, line: '24 uploads at 2/s: about 12 s' });
    expect(paceLine(49, 5)).toBeNull();
  });

  it('takes the rate as the queue does: rounded down above 1, one call per whole interval below', () => {
    expect(paceLine(50, 2.5)?.seconds).toBe(25);
    expect(paceLine(10, 0.25)).toEqual({ seconds: 40, line: '10 uploads at 1 every 4 s: about 40 s' });
    expect(paceLine(100_000, 5)?.line).toBe('100,000 uploads at 5/s: about 5.6 h');
  });
});
