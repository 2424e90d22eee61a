import { Gauge, type Registry } from 'prom-client';

/** The event-loop lag gauges prom-client fills from Node's delay histogram. */
const FROM_HISTOGRAM = ['min', 'max', 'mean', 'p50', 'p90', 'p99'].map((s) => `nodejs_eventloop_lag_${s}_seconds`);

/**
 * Node's delay histogram records each sample as the whole time between two ticks of its timer, so with
 * a sampling period of `periodMs` an idle process reads a "lag" of that period. This replaces each
 * gauge with one that reads the original at each scrape and reports the excess over the period (0 when
 * no sample came since the last scrape, whose histogram holds no finite value).
 */
export function lagBeyondPeriod(registry: Registry, periodMs: number): void {
  for (const name of FROM_HISTOGRAM) {
    const original = registry.getSingleMetric(name);
    if (!(original instanceof Gauge)) continue;
    registry.removeSingleMetric(name);
    const help = `${(original as unknown as { help: string }).help} (beyond the ${periodMs} ms sampling period)`;
    new Gauge({
      name,
      help,
      registers: [registry],
      // Registered after prom-client's nodejs_eventloop_lag_seconds, whose collect sets the original first.
      async collect() {
        const seconds = (await original.get()).values[0]?.value ?? 0;
        const beyond = seconds - periodMs / 1000;
        this.set(Number.isFinite(seconds) && seconds < 1e6 ? Math.max(0, beyond) : 0);
      },
    });
  }
}
