/**
 * The layout of src/ (docs/architecture.md): no import cycle, and the records and values
 * (model/model.ts, model/values.ts) depend on no domain, so a new domain folder can lean on
 * them without being leaned back on.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') ? [p] : [];
  });
}

/** Each source file's relative imports (type-only ones too: they tie the modules as much). */
function importGraph(): Map<string, string[]> {
  const files = sources(root);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
    graph.set(file, specs.map((s) => path.resolve(path.dirname(file), s).replace(/\.js$/, '.ts')));
  }
  return graph;
}

/** A cycle through the graph as a list of files relative to src/, or null. */
function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (file: string): string[] | null => {
    if (state.get(file) === 'done') return null;
    if (state.get(file) === 'open') return [...trail.slice(trail.indexOf(file)), file];
    state.set(file, 'open');
    trail.push(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(file, 'done');
    return null;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle.map((f) => path.relative(root, f));
  }
  return null;
}

describe('the layout of src/', () => {
  const graph = importGraph();

  it('resolves every relative import to a source file', () => {
    for (const deps of graph.values()) for (const dep of deps) expect(graph.has(dep), dep).toBe(true);
  });

  it('has no import cycle', () => {
    expect(findCycle(graph)).toBeNull();
  });

  it('keeps the records and values free of every domain', () => {
    const shared = new Set(['errors.ts', 'assert.ts', 'constants.ts'].map((f) => path.join(root, f)));
    for (const file of ['model/model.ts', 'model/values.ts'].map((f) => path.join(root, f))) {
      expect(graph.has(file), file).toBe(true);
      for (const dep of graph.get(file) ?? []) {
        const inModel = dep.startsWith(path.join(root, 'model') + path.sep);
        expect(inModel || shared.has(dep), `${path.relative(root, file)} imports ${path.relative(root, dep)}`).toBe(true);
      }
    }
  });
});
