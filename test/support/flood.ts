/**
 * A flooding client in a process of its own, so that its thousand loops do not slow the
 * test's own measured requests (one event loop for both would time the client, not the
 * daemon). It keeps `connections` requests in flight, each sent again as soon as it is
 * answered, whatever the answer (it ignores Retry-After), until told to stop; then it
 * reports what it was answered.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** The 99th percentile of latencies (ms) a flood test prints beside its quiet ones. */
export function p99(ms: readonly number[]): number {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

export interface FloodOptions {
  readonly url: string;
  readonly token: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** A JSON body for POST; each request gets a fresh `client-key` header. */
  readonly body?: unknown;
  readonly connections: number;
  /** Stops by itself after this long, whatever happens to the test. */
  readonly durationMaxMs: number;
  /** The loopback address it sends from (127.0.0.0/8), to stand for a source of its own. */
  readonly localAddress?: string;
}

export interface FloodReport {
  /** Replies by status. */
  readonly statuses: Record<string, number>;
  /** 503s that were not ERR-DecisionUnavailable with an integer Retry-After. */
  readonly badRefusals: number;
  /** 503s the edge gave before reading the request's body, for coming too soon after a Retry-After (docs/daemon.md, "Floods"). */
  readonly tooSoon: number;
  /** Refusals (4xx, 5xx) by status, code and description (its numbers as N): what the flood was told, and why. */
  readonly refusals: Record<string, number>;
  /** Requests that got no reply (a reset, a timeout). */
  readonly failures: number;
  readonly failureSamples: string[];
}

const script = `
import { Pool } from 'undici';
const o = JSON.parse(process.argv[1]);
const pool = new Pool(o.url, { connections: o.connections, pipelining: 1, connect: { timeout: 30000 }, ...(o.localAddress ? { localAddress: o.localAddress } : {}) });
const statuses = {};
const refusals = {};
let badRefusals = 0, tooSoon = 0, failures = 0, key = 0;
const failureSamples = [];
let on = true;
const stop = () => { on = false; };
process.stdin.on('data', stop); process.stdin.on('end', stop);
setTimeout(stop, o.durationMaxMs).unref();
const headers = { authorization: 'Bearer ' + o.token, ...(o.method === 'POST' ? { 'content-type': 'application/json' } : {}) };
const body = o.body === undefined ? undefined : JSON.stringify(o.body);
let ready = 0;
await Promise.all(Array.from({ length: o.connections }, async (_, i) => {
  // Opened 100 at a time, as a listen backlog takes them.
  await new Promise((r) => setTimeout(r, Math.floor(i / 100) * 50));
  let first = true;
  while (on) {
    try {
      const res = await pool.request({ method: o.method, path: o.path, body, headers: o.method === 'POST' ? { ...headers, 'client-key': 'flood-' + process.pid + '-' + (++key) } : headers });
      const text = await res.body.text();
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      if (res.statusCode >= 400) {
        let error = null, description = '';
        try { ({ error, description } = JSON.parse(text)); } catch {}
        const why = res.statusCode + ' ' + error + ' (' + String(description).replace(/[0-9]+/g, 'N') + ')';
        refusals[why] = (refusals[why] ?? 0) + 1;
        if (res.statusCode === 503) {
          if (/too soon/.test(description)) tooSoon++;
          if (error !== 'ERR-DecisionUnavailable' || !/^[1-9][0-9]*$/.test(String(res.headers['retry-after']))) badRefusals++;
        }
      }
    } catch (e) {
      failures++;
      if (failureSamples.length < 5) failureSamples.push(String(e && e.code || e));
    }
    if (first) { first = false; if (++ready === o.connections) process.stdout.write('ready\\n'); }
  }
}));
await pool.close();
process.stdout.write(JSON.stringify({ statuses, refusals, badRefusals, tooSoon, failures, failureSamples }) + '\\n');
`;

export interface Flood {
  /** Resolves once every connection has had its first reply. */
  readonly ready: Promise<void>;
  /** Stops the flood and resolves with its report. */
  stop(): Promise<FloodReport>;
}

export function startFlood(options: FloodOptions, cwd: string): Flood {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(options)], { cwd, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  let onReady: () => void = () => {};
  let onReport: (report: FloodReport) => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const report = new Promise<FloodReport>((resolve, reject) => {
    onReport = resolve;
    child.once('exit', (code) => reject(new Error(`the flood exited with ${code} before reporting`)));
  });
  lines.on('line', (line) => {
    if (line === 'ready') onReady();
    else onReport(JSON.parse(line) as FloodReport);
  });
  return {
    ready,
    stop: async () => {
      child.stdin!.end();
      return report;
    },
  };
}
