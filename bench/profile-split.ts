/**
 * Where ledgerd's main thread spends an acknowledgement: the samples of a V8 CPU profile
 * (`node dist/bench/http.js --profile-dir DIR` writes one per ledgerd run) split by the
 * part of the path that took them, in % of the thread's non-idle samples. A sample goes
 * to the innermost part of its stack that names one (the HTTP edge's files, intake, the
 * decider, the group write, the event stream, ...); files several parts share (the
 * overlay, prefetch, the caches, the kernel's facade, metrics, the views) go to the part
 * that called them. Samples inside classic-level's calls are marked: much of that is the
 * thread blocked on LevelDB's locks or waiting for its core (pinned, every thread of
 * ledgerd shares one), not computing. Nothing is asserted.
 *
 *   npm run build && node dist/bench/profile-split.js DIR/CPU.*.cpuprofile
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
}

/** The parts, each by the files that are its own; the first whose pattern a frame's file matches names it. */
const parts: readonly (readonly [string, RegExp])[] = [
  ['event stream', /dist\/daemon\/events\.js|dist\/src\/book\/events\.js/],
  ['group write', /dist\/src\/book\/(group-commit|recovery)\.js/],
  ['intake (incl. precheck)', /dist\/src\/book\/intake\.js|dist\/src\/decide\/precheck\.js/],
  ['decider', /dist\/src\/book\/(decider|round-builder|commit|overlay|prefetch|totals|state|cache|kernel)\.js|dist\/src\/decide\/|dist\/src\/auth\/audit\.js/],
  ['derived client key (digest)', /dist\/daemon\/http\/digest\.js|dist\/src\/model\/canonical\.js/],
  ['authentication', /dist\/daemon\/http\/(auth|roles)\.js/],
  ['edge limits', /dist\/daemon\/http\/edge-limits\.js/],
  ['routes: parse, submit, reply', /dist\/daemon\/(routes|http)\/|dist\/daemon\/app\.js|dist\/src\/model\/values\.js/],
  ['rendering (views)', /dist\/src\/queries\//],
  ['metrics', /dist\/daemon\/metrics\.js|prom-client/],
  ['AJV validation', /node_modules\/(ajv|@fastify\/ajv)/],
  ['Fastify (and the reply written under it)', /node_modules\/(fastify|find-my-way|fast-json-stringify|avvio|@fastify|pino|abstract-logging)/],
];
/** Files several parts call: a sample in them goes to the part above them on the stack. */
const shared = /dist\/src\/book\/(overlay|prefetch|cache|kernel)\.js|dist\/daemon\/metrics\.js|prom-client|dist\/src\/queries\/|dist\/src\/model\/values\.js/;
const inStore = /classic-level|abstract-level/;
const nodeHttp = /node:(_http|net|internal\/stream|internal\/streams|events)/;

function partOf(urls: readonly string[]): string {
  let fallback: string | null = null;
  for (const url of urls) {
    const part = parts.find(([, pattern]) => pattern.test(url))?.[0];
    if (part === undefined) continue;
    if (!shared.test(url)) return part;
    fallback ??= part;
  }
  if (fallback !== null) return fallback;
  if (urls.some((url) => inStore.test(url))) return 'classic-level (no caller of ours)';
  return urls.some((url) => nodeHttp.test(url)) ? 'Node HTTP and sockets' : 'other (start-up, timers, microtasks)';
}

/** Each part's share of the non-idle samples, largest first. */
export function splitProfile(profile: Profile): { busyShare: number; parts: [string, number][] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const tally = new Map<string, number>();
  let idle = 0;
  for (const [id, count] of hits) {
    const name = byId.get(id)!.callFrame.functionName;
    if (name === '(idle)') {
      idle += count;
      continue;
    }
    const urls: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) urls.push(byId.get(at)!.callFrame.url);
    const part = name === '(garbage collector)' ? 'GC' : name === '(program)' ? '(program: V8 and native, unattributed)' : partOf(urls);
    const key = part !== 'GC' && !part.startsWith('classic-level') && urls.some((url) => inStore.test(url)) ? `${part}, inside classic-level calls` : part;
    tally.set(key, (tally.get(key) ?? 0) + count);
  }
  const busy = profile.samples.length - idle;
  return { busyShare: busy / profile.samples.length, parts: [...tally].map(([part, count]): [string, number] => [part, count / busy]).sort((a, b) => b[1] - a[1]) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) {
    const { busyShare, parts: shares } = splitProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile);
    console.log(`${file}: main thread busy ${(busyShare * 100).toFixed(1)}% of the profile; % of its busy samples:`);
    for (const [part, share] of shares) if (share >= 0.001) console.log(`${(share * 100).toFixed(1).padStart(6)}%  ${part}`);
  }
}
