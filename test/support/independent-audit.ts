/**
 * An independent verifier of CONTRACT 12's proofs, written from its text and RFC 9162
 * alone with plain node:crypto: it imports none of the project's code. It checks
 * checkpoint objects of both versions and their chain, consistency proofs (12.1) and a
 * holder's liabilities proof (12.4), and throws with the reason when anything does not hold.
 */
import { createHash } from 'node:crypto';

const H = (...bufs: Buffer[]) => createHash('sha256').update(Buffer.concat(bufs)).digest();
const hex = (b: Buffer) => b.toString('hex');
const HEX64 = /^[0-9a-f]{64}$/;
const UDEC = /^(0|[1-9][0-9]*)$/;
const LIMIT = 1n << 256n;

function canon(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
  const o = v as Record<string, unknown>;
  return '{' + Object.keys(o).sort().map((k) => JSON.stringify(k) + ':' + canon(o[k])).join(',') + '}';
}

function must(condition: unknown, why: string): asserts condition {
  if (!condition) throw new Error(why);
}

const keysAre = (o: Record<string, unknown>, names: string[]) => Object.keys(o).sort().join() === [...names].sort().join();

/** The commitment of a checkpoint object, by its version (9, 12.3), with `previous` from the chain. */
export function commitmentOf(instance: number, c: Record<string, any>, previous: string): string {
  if (!('version' in c)) return hex(H(Buffer.from(canon({ instance, number: c.number, entry_sequence: c.entry_sequence, kernel_root: c.kernel_root, previous }), 'utf8')));
  must(c.version === 2, 'unknown checkpoint version');
  must(typeof c.previous === 'string' && HEX64.test(c.previous), 'version 2 without previous');
  must(c.previous === previous, 'previous is not the prior commitment');
  must(typeof c.liabilities === 'object' && c.liabilities !== null && !Array.isArray(c.liabilities), 'version 2 without liabilities');
  for (const r of Object.values<any>(c.liabilities)) {
    must(keysAre(r, ['leaves', 'root', 'total']) && Number.isSafeInteger(r.leaves) && r.leaves > 0 && HEX64.test(r.root) && UDEC.test(r.total), 'a liabilities root is malformed');
  }
  return hex(H(Buffer.from(canon({ entry_sequence: c.entry_sequence, instance, kernel_root: c.kernel_root, liabilities: c.liabilities, number: c.number, previous: c.previous, version: 2 }), 'utf8')));
}

/** Checks a whole chain (oldest first from 1); returns it. */
export function checkChain(instance: number, chain: readonly Record<string, any>[]): readonly Record<string, any>[] {
  let previous = '0'.repeat(64);
  let seenV2 = false;
  chain.forEach((c, i) => {
    must(c.number === i + 1, 'chain has a gap');
    must(!(seenV2 && !('version' in c)), 'version 1 after version 2');
    seenV2 ||= 'version' in c;
    must(commitmentOf(instance, c, previous) === c.commitment, `commitment ${c.number} does not recompute`);
    previous = c.commitment;
  });
  return chain;
}

/** RFC 9162 2.1.4.2, verbatim, with CONTRACT 12.1's empty cases. */
export function verifyConsistency(first: number, second: number, firstHash: string, secondHash: string, proof: string[]): void {
  must(Number.isSafeInteger(first) && Number.isSafeInteger(second) && 0 <= first && first <= second, 'sizes out of order');
  must(Array.isArray(proof), 'proof is not an array');
  for (const p of proof) must(typeof p === 'string' && HEX64.test(p), 'proof element is not 32 bytes of hex');
  if (first === 0) return must(proof.length === 0, 'proof from the empty tree is not empty');
  if (first === second) {
    must(proof.length === 0, 'proof between equal sizes is not empty');
    return must(firstHash === secondHash, 'equal sizes, different roots');
  }
  const path = proof.map((p) => Buffer.from(p, 'hex'));
  if ((first & (first - 1)) === 0) path.unshift(Buffer.from(firstHash, 'hex'));
  must(path.length > 0, 'proof is empty');
  let fn = first - 1;
  let sn = second - 1;
  while ((fn & 1) === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    must(sn !== 0, 'proof too long');
    if ((fn & 1) === 1 || fn === sn) {
      fr = H(Buffer.from([1]), c, fr);
      sr = H(Buffer.from([1]), c, sr);
      if ((fn & 1) === 0) {
        while (!((fn & 1) === 1 || fn === 0)) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      sr = H(Buffer.from([1]), sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  must(sn === 0, 'proof too short');
  must(hex(fr) === firstHash, 'first root does not match');
  must(hex(sr) === secondHash, 'second root does not match');
}

/** 12.1's verifier: the reply against the holder's chain (already checked). */
export function verifyConsistencyReply(instance: number, chain: readonly Record<string, any>[], n: number, m: number, reply: any): void {
  must(keysAre(reply, ['from', 'to', 'proof']), 'reply members');
  const { from, to } = reply;
  must(from.number === n && to.number === m && n <= m, 'wrong pair');
  for (const [served, held] of [[from, chain[n - 1]], [to, chain[m - 1]]]) {
    must(held !== undefined, 'checkpoint not held');
    const previous = served.number === 1 ? '0'.repeat(64) : chain[served.number - 2]!.commitment;
    must(commitmentOf(instance, served, previous) === served.commitment, 'served commitment does not recompute');
    must(served.commitment === held.commitment, 'served checkpoint is not the one held');
  }
  verifyConsistency(from.entry_sequence, to.entry_sequence, from.kernel_root, to.kernel_root, reply.proof);
}

const U256 = (x: bigint) => {
  must(x >= 0n && x < LIMIT, 'sum out of range');
  return Buffer.from(x.toString(16).padStart(64, '0'), 'hex');
};
const node = (lh: Buffer, ls: bigint, rh: Buffer, rs: bigint): [Buffer, bigint] => [H(Buffer.from([1]), lh, U256(ls), rh, U256(rs)), ls + rs];

/** 12.4's verification, (1) to (4); `held` is the anchored checkpoint the holder trusts. Returns the leaf. */
export function verifyLiabilities(instance: number, held: Record<string, any>, account: string, asset: string, reply: any): Record<string, any> {
  must(keysAre(reply, ['account', 'asset', 'instance', 'checkpoint', 'leaf', 'index', 'path']), 'reply members');
  must(reply.instance === instance, 'another instance');
  const c = reply.checkpoint;
  must(c.version === 2, 'not version 2');
  must(commitmentOf(instance, c, c.previous) === c.commitment && c.commitment === held.commitment, 'checkpoint commitment');
  must(reply.account === account && reply.asset === asset, 'another account or asset');
  const leaf = reply.leaf;
  must(keysAre(leaf, ['account', 'asset', 'available', 'checkpoint', 'encumbered', 'reserved', 'salt']), 'leaf members');
  must(leaf.account === account && leaf.asset === asset && leaf.checkpoint === c.number, 'leaf names another account, asset or checkpoint');
  must(typeof leaf.salt === 'string' && HEX64.test(leaf.salt), 'salt');
  for (const layer of ['available', 'reserved', 'encumbered']) must(typeof leaf[layer] === 'string' && UDEC.test(leaf[layer]), `${layer} is not an unsigned decimal`);
  const root = c.liabilities[asset];
  must(root !== undefined, 'no tree in the asset');
  let h: Buffer = H(Buffer.from([0]), Buffer.from(canon(leaf), 'utf8'));
  let s = BigInt(leaf.available) + BigInt(leaf.reserved) + BigInt(leaf.encumbered);
  must(Number.isSafeInteger(reply.index) && reply.index >= 0 && reply.index < root.leaves, 'index');
  let fn = reply.index;
  let sn = root.leaves - 1;
  for (const e of reply.path) {
    must(sn !== 0, 'path too long');
    must(keysAre(e, ['hash', 'sum']) && HEX64.test(e.hash) && typeof e.sum === 'string' && UDEC.test(e.sum), 'path element');
    const ch = Buffer.from(e.hash, 'hex');
    const cs = BigInt(e.sum);
    if ((fn & 1) === 1 || fn === sn) {
      [h, s] = node(ch, cs, h, s);
      while ((fn & 1) === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      [h, s] = node(h, s, ch, cs);
    }
    must(s < LIMIT, 'sum out of range');
    fn >>= 1;
    sn >>= 1;
  }
  must(sn === 0, 'path too short');
  must(hex(h) === root.root, 'root does not match');
  must(s.toString() === root.total, 'total does not match');
  return leaf;
}

/**
 * 12.2 from the leaves alone: the root object of a liabilities tree over leaf objects
 * (sorted by leaf hash here), to compare with a checkpoint's.
 */
export function liabilitiesRootOf(leaves: readonly Record<string, any>[]): { leaves: number; root: string; total: string } {
  const items = leaves.map((l): [Buffer, bigint] => [H(Buffer.from([0]), Buffer.from(canon(l), 'utf8')), BigInt(l.available) + BigInt(l.reserved) + BigInt(l.encumbered)]);
  items.sort((a, b) => Buffer.compare(a[0], b[0]));
  const mth = (xs: [Buffer, bigint][]): [Buffer, bigint] => {
    if (xs.length === 1) return xs[0]!;
    let k = 1;
    while (k * 2 < xs.length) k *= 2;
    const [lh, ls] = mth(xs.slice(0, k));
    const [rh, rs] = mth(xs.slice(k));
    return node(lh, ls, rh, rs);
  };
  const [h, s] = mth(items);
  return { leaves: items.length, root: hex(h), total: s.toString() };
}
