/** One row of docs/benchmarks.md: a measured figure beside a reference measured in the same run, and its target. */
export type Figure = {
  /** Which benchmark it comes from (a table section). */
  group: string;
  name: string;
  /** The measured value (null: not measured, see `note`). */
  value: number | null;
  unit: string;
  reference: { name: string; value: number | null } | null;
  /** value / reference.value. */
  ratio: number | null;
  /** The target in words ("≤ 1000 ms and below the reference"); null for a figure kept for diagnosis. */
  target: string | null;
  /** Whether the target is met; null when there is no target or the figure could not be measured. */
  pass: boolean | null;
  note?: string;
};

/** A figure without a target: shown for diagnosis, never fails the run. */
export function info(
  group: string,
  name: string,
  value: number | null,
  unit: string,
  note?: string,
  reference: Figure['reference'] = null,
): Figure {
  const r = reference?.value ?? null;
  const ratioValue = value === null || r === null || r === 0 ? null : Math.round((value / r) * 100) / 100;
  return { group, name, value, unit, reference, ratio: ratioValue, target: null, pass: null, ...(note === undefined ? {} : { note }) };
}

/** A pass/fail check with no number ("undici is not loaded"). */
export function check(group: string, name: string, ok: boolean | null, note: string): Figure {
  return { group, name, value: null, unit: 'check', reference: null, ratio: null, target: 'holds', pass: ok, note };
}
