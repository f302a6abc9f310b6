/**
 * The clerk (CONTRACT 9): the ed25519 key pair that signs disclosures, `DIR/clerk.key`
 * (PKCS#8 PEM, 0600) and `DIR/clerk.pub` (the public key as hex, 0644). Made at init,
 * or at the first start of a book that has none; a `clerk.pub` of an older book (PEM)
 * is rewritten as hex from the private key.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { bookPaths, writeAtomically } from './data-dir.js';

export interface Clerk {
  /** The raw 32-byte ed25519 public key, hex. */
  readonly publicKeyHex: string;
  sign(bytes: Buffer): Buffer;
}

/** The raw public key of an ed25519 key object, hex (the last 32 bytes of its SPKI DER). */
export function rawPublicKeyHex(key: KeyObject): string {
  const der = (key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'der' });
  return der.subarray(der.length - 32).toString('hex');
}

/** Writes a new clerk key pair into `dataDir`. */
export async function writeClerkKeys(dataDir: string): Promise<void> {
  const paths = bookPaths(dataDir);
  const pair = generateKeyPairSync('ed25519');
  await writeAtomically(paths.clerkKey, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600);
  await writeAtomically(paths.clerkPublicKey, `${rawPublicKeyHex(pair.publicKey)}\n`, 0o644);
}

export async function loadClerk(dataDir: string): Promise<Clerk> {
  const paths = bookPaths(dataDir);
  if (!existsSync(paths.clerkKey)) await writeClerkKeys(dataDir);
  const privateKey = createPrivateKey(await readFile(paths.clerkKey, 'utf8'));
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${paths.clerkKey} does not hold an ed25519 key`);
  const publicKeyHex = rawPublicKeyHex(privateKey);
  const published = existsSync(paths.clerkPublicKey) ? (await readFile(paths.clerkPublicKey, 'utf8')).trim() : '';
  if (published !== publicKeyHex) await writeAtomically(paths.clerkPublicKey, `${publicKeyHex}\n`, 0o644);
  return { publicKeyHex, sign: (bytes) => sign(null, bytes, privateKey) };
}

/**
 * The key the salts of liabilities leaves derive from (CONTRACT 12.2): 32 random bytes,
 * kept as hex in `DIR/liabilities.key` (0600), made at the first start of a book that
 * has none. Never served, exported or carried in a backup.
 */
export async function loadLiabilitiesKey(dataDir: string): Promise<Buffer> {
  const path = bookPaths(dataDir).liabilitiesKey;
  if (!existsSync(path)) await writeAtomically(path, `${randomBytes(32).toString('hex')}\n`, 0o600);
  const text = (await readFile(path, 'utf8')).trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${path} does not hold 32 bytes of hex`);
  return Buffer.from(text, 'hex');
}
