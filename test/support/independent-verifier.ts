/**
 * An independent disclosure verifier, written from CONTRACT 9 alone with plain
 * node:crypto: it imports none of the project's code. Tests check every disclosure
 * they make with it as well as with the service's own verifier. It throws with the
 * reason when anything does not hold.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { commitmentOf, verifyLiabilities } from './independent-audit.js';

export interface IndependentTrust {
  /** The clerk's raw ed25519 public key, hex (DIR/clerk.pub). */
  readonly clerk: string;
  readonly instance: number;
  /** The deployment's checkpoints, oldest first from number 1, with their status (GET /v1/checkpoints). */
  readonly checkpoints: readonly { number: number; commitment: string; kernel_root: string; entry_sequence: number; status: string }[];
}

function canon(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
  const o = v as Record<string, unknown>;
  return '{' + Object.keys(o).sort().map((k) => JSON.stringify(k) + ':' + canon(o[k])).join(',') + '}';
}

const H = (...bufs: Buffer[]) => createHash('sha256').update(Buffer.concat(bufs)).digest();

function must(condition: unknown, why: string): asserts condition {
  if (!condition) throw new Error(why);
}

/** RFC 9162 section 2.1.3.2, verbatim. */
function rootFromPath(leaf: Buffer, index: number, size: number, path: string[]): Buffer {
  must(index < size, 'leaf index beyond the tree');
  let fn = index;
  let sn = size - 1;
  let r = H(Buffer.from([0x00]), leaf);
  for (const hex of path) {
    must(sn !== 0, 'proof too long');
    const p = Buffer.from(hex, 'hex');
    must(p.length === 32 && p.toString('hex') === hex, 'proof element is not 32 bytes of hex');
    if ((fn & 1) === 1 || fn === sn) {
      r = H(Buffer.from([0x01]), p, r);
      if ((fn & 1) === 0) {
        while (!((fn & 1) === 1 || fn === 0)) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = H(Buffer.from([0x01]), r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  must(sn === 0, 'proof too short');
  return r;
}

export function independentlyVerify(hex: string, trust: IndependentTrust): void {
  must(/^([0-9a-f]{2})+$/.test(hex), 'not hex');
  const bytes = Buffer.from(hex, 'hex');
  const text = bytes.toString('utf8');
  must(Buffer.from(text, 'utf8').equals(bytes), 'not UTF-8');
  const d = JSON.parse(text) as Record<string, any>;
  must(canon(d) === text, 'not canonical');
  must(d.v === 1 || d.v === 2, 'version');
  // Version 2 (CONTRACT 12.7) adds the subject's liabilities proof.
  must(Object.keys(d).sort().join() === `assertion,checkpoint,clerk,evidence,instance,issued_at,${d.v === 2 ? 'liabilities,' : ''}recipient,signature,subject,v`, 'members');

  // Signature: ed25519 by the clerk over the prefix and the canonical JSON without `signature`.
  must(d.clerk === trust.clerk, 'another clerk');
  const { signature, ...unsigned } = d;
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(trust.clerk, 'hex')]), format: 'der', type: 'spki' });
  must(verify(null, Buffer.from(`ledger-disclosure:v${d.v}:` + canon(unsigned), 'utf8'), key, Buffer.from(signature, 'hex')), 'bad signature');

  // Checkpoint: the commitment chain from number 1, and the disclosure's checkpoint is a final link of it.
  must(d.instance === trust.instance, 'another deployment');
  let previous = '0'.repeat(64);
  for (const [i, c] of trust.checkpoints.entries()) {
    must(c.number === i + 1, 'chain has a gap');
    // Version 1 (section 9) or 2 (CONTRACT 12.3), each by its own commitment.
    must(commitmentOf(trust.instance, c, previous) === c.commitment, `commitment ${c.number} does not chain`);
    previous = c.commitment;
  }
  const anchored = trust.checkpoints[d.checkpoint.number - 1];
  must(anchored !== undefined && anchored.status === 'final', 'checkpoint not final');
  must(anchored.commitment === d.checkpoint.commitment && anchored.kernel_root === d.checkpoint.kernel_root && anchored.entry_sequence === d.checkpoint.entry_sequence, 'checkpoint differs');
  const size: number = d.checkpoint.entry_sequence;
  const root: string = d.checkpoint.kernel_root;

  // Proofs: each leaf is the subject's, covered, and its path leads to the root.
  const leaves: any[] = [];
  for (const { leaf, proof } of d.evidence as { leaf: any; proof: string[] }[]) {
    must(leaf.account === d.subject, 'leaf of another account');
    must(Number.isInteger(leaf.seq) && leaf.seq >= 1 && leaf.seq <= size, 'leaf not covered');
    must(!leaves.some((l) => l.seq === leaf.seq), 'leaf twice');
    must(rootFromPath(Buffer.from(canon(leaf), 'utf8'), leaf.seq - 1, size, proof).toString('hex') === root, `proof of ${leaf.seq} fails`);
    leaves.push(leaf);
  }

  // Assertion, per shape (CONTRACT 9 "what each shape rests on").
  const a = d.assertion;
  const total = (ls: any[]) => ls.reduce((t, l) => t + BigInt(l.amount), 0n);
  switch (a.shape) {
    case 'operation_occurred':
      must(leaves.length > 0 && leaves.every((l) => l.operation === a.operation), 'operation not shown');
      break;
    case 'operation_moved': {
      must(leaves.length > 0 && leaves.every((l) => l.operation === a.operation), 'operation not shown');
      const inAsset = leaves.filter((l) => l.asset === a.asset);
      const want = BigInt(a.amount);
      must(total(inAsset.filter((l) => l.direction === 'debit')) === want || total(inAsset.filter((l) => l.direction === 'credit')) === want, 'amount not moved');
      break;
    }
    case 'flows_bound': {
      const dir = a.direction === 'in' ? 'credit' : 'debit';
      for (const l of leaves) {
        must(l.asset === a.asset && l.seq >= a.from_sequence && l.seq <= a.to_sequence, 'leaf outside the flow');
        must(l.counterparty !== null && l.counterparty !== d.subject && l.direction === dir, 'leaf is not a crossing flow that way');
      }
      const sum = total(leaves);
      must(a.bound_kind === 'at_least' ? sum >= BigInt(a.bound) : sum <= BigInt(a.bound), 'bound not met');
      break;
    }
    case 'holds_at_least':
      must(a.kind === 'available' && leaves.length === 1 && leaves[0].asset === a.asset, 'not one entry in the asset');
      must(BigInt(leaves[0].after.available) >= BigInt(a.amount), 'holds less');
      if (d.v === 2) {
        // CONTRACT 12.7: the liabilities proof at the disclosure's checkpoint, and the entry's balance is the leaf's.
        const p = d.liabilities;
        must(p.checkpoint.number === d.checkpoint.number && p.checkpoint.commitment === d.checkpoint.commitment && p.checkpoint.kernel_root === root && p.checkpoint.entry_sequence === size, 'liabilities at another checkpoint');
        const leaf = verifyLiabilities(trust.instance, anchored, d.subject, a.asset, p);
        for (const layer of ['available', 'reserved', 'encumbered']) must(leaves[0].after[layer] === leaf[layer], `${layer} is not the leaf's`);
      }
      break;
    default:
      throw new Error('unknown shape');
  }
}
