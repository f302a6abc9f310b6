/**
 * ledgerd's `GET /metrics` (Prometheus text format, operator bearer) read for the dashboard's
 * status line: a small parser of the text format, and quantiles estimated from histogram buckets
 * the way Prometheus's `histogram_quantile` does (linear within the bucket holding the rank).
 */

export interface Sample {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

/** Bytes of a metrics reply the dashboard parses; a larger one is not read (the status says unavailable). */
export const metricsBytesMax = 1 << 20;

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?\s*$/;
const labelPair = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;

function numberOf(text: string): number | null {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const value = Number(text);
  return text.trim() === '' || Number.isNaN(value) ? null : value;
}

function labelsOf(text: string | undefined): Record<string, string> | null {
  const labels: Record<string, string> = Object.create(null) as Record<string, string>;
  if (text === undefined || text.trim() === '') return labels;
  labelPair.lastIndex = 0;
  let match: RegExpExecArray | null;
  while (labelPair.lastIndex < text.length && (match = labelPair.exec(text)) !== null) {
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labelPair.lastIndex === text.length || text.slice(labelPair.lastIndex).trim() === '' ? labels : null;
}

/** The samples of a text-format exposition; comments, blank and malformed lines are skipped. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = sampleLine.exec(line);
    if (match === null) continue;
    const labels = labelsOf(match[2]);
    const value = numberOf(match[3]!);
    if (labels !== null && value !== null) samples.push({ name: match[1]!, labels, value });
  }
  return samples;
}

/** The `q` quantile (0..1) of a histogram from its cumulative `_bucket` samples; null with no observations. */
export function histogramQuantile(q: number, buckets: readonly { le: number; count: number }[]): number | null {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1);
  if (total === undefined || total.le !== Infinity || total.count <= 0) return null;
  const rank = q * total.count;
  let lower = 0;
  let below = 0;
  for (const bucket of sorted) {
    if (bucket.count >= rank) {
      // The +Inf bucket has no upper bound: Prometheus answers the highest finite bound.
      if (bucket.le === Infinity) return lower;
      if (bucket.count === below) return bucket.le;
      return lower + (bucket.le - lower) * ((rank - below) / (bucket.count - below));
    }
    lower = bucket.le;
    below = bucket.count;
  }
  return lower;
}

export interface Status {
  backlog: number | null;
  p50Seconds: number | null;
  p99Seconds: number | null;
  /** Rejections over decisions since ledgerd started; null before any decision. */
  rejectionRate: number | null;
  decisions: number | null;
  version: string | null;
  startedAtMs: number | null;
}

const sum = (samples: readonly Sample[], name: string): number | null => {
  const found = samples.filter((s) => s.name === name);
  return found.length === 0 ? null : found.reduce((total, s) => total + s.value, 0);
};

/** The status line's figures from the metric names ledgerd serves (a metric it lacks is null). */
export function statusOf(samples: readonly Sample[]): Status {
  const buckets = samples
    .filter((s) => s.name === 'ledgerd_decision_latency_seconds_bucket' && s.labels.le !== undefined)
    .map((s) => ({ le: numberOf(s.labels.le!) ?? NaN, count: s.value }))
    .filter((b) => !Number.isNaN(b.le));
  const decisions = sum(samples, 'ledgerd_decisions_total');
  const rejections = sum(samples, 'ledgerd_rejections_total');
  const start = sum(samples, 'process_start_time_seconds');
  return {
    backlog: sum(samples, 'ledgerd_backlog_commands'),
    p50Seconds: histogramQuantile(0.5, buckets),
    p99Seconds: histogramQuantile(0.99, buckets),
    rejectionRate: decisions === null || rejections === null || decisions <= 0 ? null : rejections / decisions,
    decisions,
    version: samples.find((s) => s.name === 'ledgerd_build_info' && s.labels.version !== undefined)?.labels.version ?? null,
    startedAtMs: start === null ? null : start * 1000,
  };
}

const knownNames = new Set(['ledgerd_backlog_commands', 'ledgerd_decision_latency_seconds_bucket', 'ledgerd_decisions_total', 'ledgerd_rejections_total', 'ledgerd_build_info', 'process_start_time_seconds']);

/** The status from a `/metrics` body; a body with none of ledgerd's metrics (a proxy's page) is unavailable. */
export function readStatus(text: string): Status | { unavailable: string } {
  const samples = parseMetrics(text);
  return samples.some((s) => knownNames.has(s.name)) ? statusOf(samples) : { unavailable: 'no ledgerd metrics in the reply' };
}

/** `4.2 ms`, `1.20 s`. */
export function latencyText(seconds: number | null): string {
  if (seconds === null) return '-';
  return seconds < 1 ? `${(seconds * 1000).toPrecision(2)} ms` : `${seconds.toFixed(2)} s`;
}

/** `3s`, `2m 5s`, `4h 10m`, `3d 2h`: how long ago or how long since. */
export function durationText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

/** `3s ago`, `2m ago`: an age at a glance (the whole minutes, hours, days). */
export function ageText(atMs: number, nowMs: number): string {
  const s = Math.max(0, Math.floor((nowMs - atMs) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** The status line: figures, or why there are none; `wide` false, in words short enough for 80 columns. */
export function statusText(status: Status | { unavailable: string }, nowMs: number, wide = true): string {
  if ('unavailable' in status) return `metrics unavailable (${status.unavailable})`;
  const rate = status.rejectionRate === null ? '-' : `${(status.rejectionRate * 100).toFixed(1)}%`;
  return [
    `backlog ${status.backlog ?? '-'}`,
    `${wide ? 'decision ' : ''}p50 ${latencyText(status.p50Seconds)} p99 ${latencyText(status.p99Seconds)}`,
    `${wide ? 'rejected' : 'rej'} ${rate} of ${status.decisions ?? '-'}`,
    `${wide ? 'ledgerd ' : 'v'}${status.version ?? '-'}`,
    `up ${status.startedAtMs === null ? '-' : durationText(nowMs - status.startedAtMs)}`,
  ].join(' · ');
}
