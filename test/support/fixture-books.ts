/**
 * Books kept as fixtures (test/fixtures/layout-N): each a backup of every store entry made
 * by the release that wrote that store layout, its API keys, and what that daemon answered
 * (make-book.mjs in each says how). Laid into a fresh LevelDB data dir as that daemon left
 * it, so the tests need none of the old code.
 */
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { readBackup } from '../../daemon/backup-format.js';
import { LevelStore } from '../../src/store/level.js';

export interface FixtureBook {
  readonly dir: string;
  readonly keys: { readonly operator: string; readonly identities: string } & Readonly<Record<string, string>>;
  readonly expected: any;
}

/** The fixture in `test/fixtures/<name>`: its keys and the answers its daemon gave. */
export function fixtureBook(name: string): FixtureBook {
  const dir = new URL(`../fixtures/${name}/`, import.meta.url).pathname;
  return { dir, keys: JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')), expected: JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) };
}

/**
 * Lays the fixture's book into `dataDir`: every store entry (after `edit`), the files its
 * backup carries (daemon.key, the clerk's pair, …), the operator's and identities' API keys,
 * and `extraFiles` (a config, say).
 */
export async function layFixtureBook(fixture: FixtureBook, dataDir: string, edit: (entries: Map<string, string>) => void = () => {}, extraFiles: Record<string, string> = {}): Promise<void> {
  const entries = new Map<string, string>();
  // Read without checking its signature: the backup key of the daemon that made it is not at hand.
  const { header } = await readBackup(createInterface({ input: createReadStream(join(fixture.dir, 'book.backup')), crlfDelay: Infinity }), { unverified: true }, {
    onHeader: () => {},
    onEntry: async (key, value) => {
      entries.set(key, value);
    },
  });
  edit(entries);
  const store = await LevelStore.open(join(dataDir, 'book'));
  try {
    await store.write([...entries].map(([key, value]) => ({ type: 'put' as const, key, value })), true);
  } finally {
    await store.close();
  }
  for (const [name, text] of Object.entries(header.files)) writeFileSync(join(dataDir, name), text as string, { mode: 0o600 });
  writeFileSync(join(dataDir, 'operator.key'), `${fixture.keys.operator}\n`, { mode: 0o600 });
  writeFileSync(join(dataDir, 'identities.key'), `${fixture.keys.identities}\n`, { mode: 0o600 });
  for (const [name, text] of Object.entries(extraFiles)) writeFileSync(join(dataDir, name), text, { mode: 0o600 });
}

/** The first `count` events of the stream from its start, as a fixture records them: id, type, data (read as the operator with `token`). */
export async function eventsFromStart(url: string, token: string, count: number): Promise<{ id: number; event: string; data: any }[]> {
  const controller = new AbortController();
  const res = await fetch(`${url}/v1/events?after=0`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  if (res.status !== 200) throw new Error(`GET /v1/events: ${res.status}`);
  const out: { id: number; event: string; data: any }[] = [];
  let text = '';
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  while (out.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = text.indexOf('\n\n')) >= 0 && out.length < count) {
      const block = text.slice(0, cut);
      text = text.slice(cut + 2);
      const id = /^id: (\d+)$/m.exec(block);
      const event = /^event: (\S+)$/m.exec(block);
      const data = /^data: (.*)$/m.exec(block);
      if (id && data) out.push({ id: Number(id[1]), event: event?.[1] ?? 'message', data: JSON.parse(data[1]!) });
    }
  }
  controller.abort();
  return out;
}
