import { cpus, loadavg, totalmem } from 'node:os';

/** What the figures were measured on: they only mean something next to these. */
export type MachineFacts = {
  date: string;
  cpus: number;
  cpuModel: string;
  memoryGb: number;
  node: string;
  platform: string;
  /** 1-, 5- and 15-minute load averages when the run started and ended. */
  loadBefore: number[];
  loadAfter: number[] | null;
};

export function machineFacts(): MachineFacts {
  const list = cpus();
  return {
    date: new Date().toISOString(),
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadBefore: loadavg().map((x) => Math.round(x * 100) / 100),
    loadAfter: null,
  };
}

export function currentLoad(): number[] {
  return loadavg().map((x) => Math.round(x * 100) / 100);
}
