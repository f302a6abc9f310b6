/**
 * docs/daemon.md's configuration table against the code: every default and bound it
 * quotes is the one the daemon applies, and every setting the daemon takes is in it.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../daemon/config.js';
import { type ConfigRow as Row, configSettings, configTable, withSettings } from '../support/config-table.js';
import { repoRoot } from './support.js';

const units: Record<string, number> = { ms: 1, s: 1_000, min: 60_000, h: 3_600_000, day: 86_400_000, days: 86_400_000, KiB: 1024, MiB: 1024 * 1024, GiB: 1024 * 1024 * 1024, M: 1_000_000 };

/** "30 000", "1 MiB", "604 800 000 (7 days)", "10 M": a documented quantity in the setting's own unit. */
function quantity(text: string): number {
  const m = /^([0-9][0-9 ]*)\s*(ms|s|min|h|days?|KiB|MiB|GiB|M)?(?:\s*\(.*\))?$/.exec(text.trim());
  if (m === null) throw new Error(`not a quantity: ${text}`);
  return Number(m[1]!.replaceAll(' ', '')) * (m[2] === undefined ? 1 : units[m[2]]!);
}

/**
 * "0 – 9 998, below `sseConnectionsMax`": the range, and the setting this one must stay below;
 * "…, below `sseConnectionsMax` less `sseOperatorConnectionsReserved`": a share below a pool less a reserve.
 */
function boundsOf(text: string): { range: string; below: string | null; less: string | null } {
  const m = /^(.*?)(?:, below `([A-Za-z]+)`(?: less `([A-Za-z]+)`)?)?$/.exec(text)!;
  return { range: m[1]!, below: m[2] ?? null, less: m[3] ?? null };
}

describe('docs/daemon.md configuration table', () => {
  const rows = configTable(repoRoot);
  const { config, settings } = configSettings();

  it('lists every setting the daemon takes, and only those', () => {
    expect(rows.map((r) => r.setting).sort()).toEqual(settings.sort());
  });

  it('quotes the default the daemon applies', () => {
    for (const row of rows) {
      const actual = config[row.setting];
      if (typeof actual === 'number') expect({ [row.setting]: quantity(row.defaultText) }).toEqual({ [row.setting]: actual });
      else if (row.setting === 'listen') expect(row.defaultText).toBe(`\`${(actual as { host: string }).host}:${(actual as { port: number }).port}\``);
      else if (row.setting === 'relyingParty') {
        const rp = actual as { id: string; origin: string };
        expect(row.defaultText).toBe(`\`{id: "${rp.id}", origin: "${rp.origin}"}\``);
      } else if (row.setting === 'settlement') {
        const members = Object.entries(actual as Record<string, number>).map(([k, v]) => `${k}: ${v}`);
        expect(row.defaultText).toBe(`\`{${members.join(', ')}}\``);
      } else if (row.setting === 'recovery') {
        const recovery = actual as { authority: string | null; delayMs: number };
        expect(row.defaultText).toBe(`\`{authority: ${JSON.stringify(recovery.authority)}, delayMs: ${recovery.delayMs}}\``);
      } else if (row.setting === 'backup') {
        const backup = actual as { allowPlaintext: boolean; stallTimeoutMs: number };
        expect(row.defaultText).toBe(`\`{allowPlaintext: ${backup.allowPlaintext}, stallTimeoutMs: ${backup.stallTimeoutMs}}\``);
      } else if (row.setting === 'approvals') {
        const approvals = actual as { rules: string[]; issuanceAboveMinor: Record<string, string>; ttlMs: number };
        expect(row.defaultText).toBe(`\`{rules: ${JSON.stringify(approvals.rules)}, issuanceAboveMinor: ${JSON.stringify(approvals.issuanceAboveMinor)}, ttlMs: ${approvals.ttlMs}}\``);
      } else if (row.setting === 'store') {
        const members = Object.entries(actual as Record<string, unknown>).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
        expect(row.defaultText).toBe(`\`{${members.join(', ')}}\``);
      }
      else expect(row.defaultText).toBe(`\`${String(actual)}\``);
    }
  });

  it('quotes the bounds the daemon enforces: both ends accepted, one beyond either refused', () => {
    const numeric = rows.filter((r) => typeof config[r.setting] === 'number');
    expect(numeric.length).toBeGreaterThan(10);
    const ranges = new Map(numeric.map((row) => [row.setting, boundsOf(row.boundsText)]));
    const endsOf = (row: Row) => {
      const [low, high] = ranges.get(row.setting)!.range.split('–').map((t) => t.trim());
      // "1 ms – 366 days" carries the unit on both ends; "1 – 50 000" on neither; "0 – 60 s" on the high end only
      // ("1 024 – 10 M": M is a multiple, not a unit).
      const unit = /\s(ms|s|min|h|days|KiB|MiB|GiB)$/.exec(high!)?.[1];
      const min = quantity(/[a-zA-Z]$/.test(low!) || unit === undefined ? low! : `${low} ${unit}`);
      return { min, max: quantity(high!) };
    };
    const byName = new Map(numeric.map((row) => [row.setting, row]));
    for (const row of numeric) {
      const { min, max } = endsOf(row);
      // A setting that must stay below another is tried with that one at its highest (and a reserve taken from it at its
      // lowest), and the other way round: what must stay below it, or below a pool less it, at their lowest.
      const companions: Record<string, number> = {};
      const { below, less } = ranges.get(row.setting)!;
      if (below !== null) companions[below] = endsOf(byName.get(below)!).max;
      if (less !== null) companions[less] = endsOf(byName.get(less)!).min;
      for (const [other, r] of ranges) if (r.below === row.setting || r.less === row.setting) companions[other] = endsOf(byName.get(other)!).min;
      const at = (value: number) => withSettings({ ...companions, [row.setting]: value });
      expect(at(min), `${row.setting} at ${min}`).not.toThrow();
      expect(at(max), `${row.setting} at ${max}`).not.toThrow();
      expect(at(min - 1), `${row.setting} below ${min}`).toThrow(ConfigError);
      expect(at(max + 1), `${row.setting} above ${max}`).toThrow(ConfigError);
    }
    // And the relation itself holds: equal is refused (a share equal to the pool less the reserve too).
    for (const [name, r] of ranges) {
      if (r.below === null) continue;
      const reserve = r.less === null ? {} : { [r.less]: 3 };
      expect(withSettings({ [name]: 5, [r.below]: r.less === null ? 5 : 8, ...reserve })).toThrow(ConfigError);
      if (r.less !== null) expect(withSettings({ [name]: 4, [r.below]: 8, ...reserve })).not.toThrow();
    }
  });

  it("quotes the store's and the settlement layer's own settings as the daemon applies them: default, both ends accepted, one beyond either refused", () => {
    /** "`poolSize` (8, 1 – 100)" in a row's bounds: a member, its default and its range. */
    const membersOf = (text: string) => [...text.matchAll(/`([A-Za-z]+)` \(([^,]+), ([^);]+)[);]/g)].map((m) => ({ name: m[1]!, defaultText: m[2]!, range: m[3]! }));
    const boundsText = (setting: string) => rows.find((r) => r.setting === setting)!.boundsText;
    // "`leveldb` with `openFilesMax` (...), or `postgres` with `url`, `poolSize` (...) and ...": each kind's members tried under that kind.
    const [leveldb, postgres] = boundsText('store').split(', or ');
    const quoted = [
      ...membersOf(leveldb!).map((m) => ({ ...m, setting: 'store', base: { kind: 'leveldb' } })),
      ...membersOf(postgres!).map((m) => ({ ...m, setting: 'store', base: { kind: 'postgres', url: 'postgres://db/book' } })),
      ...membersOf(boundsText('settlement')).map((m) => ({ ...m, setting: 'settlement', base: {} })),
      ...membersOf(boundsText('backup')).map((m) => ({ ...m, setting: 'backup', base: {} })),
    ];
    expect(quoted.map((q) => `${q.setting}.${q.name}`).sort()).toEqual([
      ...Object.keys(config.settlement as object).map((name) => `settlement.${name}`),
      'store.durabilityCheckMs', 'store.leaseMs', 'store.openFilesMax', 'store.poolSize', 'store.statementTimeoutMs', 'store.writeBufferBytes',
      'backup.stallTimeoutMs',
    ].sort());
    for (const { setting, name, defaultText, range, base } of quoted) {
      const [low, high] = range.split('–').map((t) => t.trim());
      const [min, max] = [quantity(low!), quantity(high!)];
      const at = (value?: number) => withSettings({ [setting]: { ...base, [name]: value } });
      expect((at()() as unknown as Record<string, Record<string, number>>)[setting]![name], `${setting}.${name}'s default`).toBe(quantity(defaultText));
      expect(at(min), `${setting}.${name} at ${min}`).not.toThrow();
      expect(at(max), `${setting}.${name} at ${max}`).not.toThrow();
      expect(at(min - 1), `${setting}.${name} below ${min}`).toThrow(ConfigError);
      expect(at(max + 1), `${setting}.${name} above ${max}`).toThrow(ConfigError);
    }
  });
});
