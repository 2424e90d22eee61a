import { describe, expect, it } from 'vitest';
import { epochDay, periodKeys, periodKeysOfDay, utcDay, utcMonth } from './periods.js';

describe('periods', () => {
  it('uses UTC days and months, whatever the local zone', () => {
    const at = new Date('2025-01-31T23:59:59.999Z');

    expect(utcDay(at)).toBe('2025-01-31');
    expect(utcMonth(at)).toBe('2025-01');
    expect(periodKeys(7, at)).toEqual({ run: 'run:7', day: 'day:2025-01-31', month: 'month:2025-01' });
  });

  it('maps an instant to its epoch day and back to the same keys', () => {
    const at = new Date('2025-02-01T00:00:00.000Z');

    expect(periodKeysOfDay(3, epochDay(at.getTime()))).toEqual(periodKeys(3, at));
    expect(epochDay(at.getTime() - 1)).toBe(epochDay(at.getTime()) - 1);
  });
});
