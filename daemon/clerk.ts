/**
 * The data dir's ed25519 key pairs: a private key (PKCS#8 PEM, 0600) with its public half
 * beside it (hex, 0644). Two are kept: the clerk's (CONTRACT 9), `DIR/clerk.key` and
 * `DIR/clerk.pub`, which signs disclosures; and the backup key, `DIR/backup.key` and
 * `DIR/backup.pub`, which signs backups (backup-key.ts). Each is made at init, or at the
 * first start of a book that has none; an older `clerk.pub` (PEM) is rewritten as hex from
 * the private key.
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

/** Where one key pair of the data dir is kept. */
export interface KeyPairPaths {
  readonly privateKey: string;
  readonly publicKey: string;
}

const clerkPaths = (dataDir: string): KeyPairPaths => ({ privateKey: bookPaths(dataDir).clerkKey, publicKey: bookPaths(dataDir).clerkPublicKey });

/** Writes a new key pair at `paths`; its public half, hex. */
export async function writeKeyPair(paths: KeyPairPaths): Promise<string> {
  const pair = generateKeyPairSync('ed25519');
  const publicKeyHex = rawPublicKeyHex(pair.publicKey);
  await writeAtomically(paths.privateKey, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600);
  await writeAtomically(paths.publicKey, `${publicKeyHex}\n`, 0o644);
  return publicKeyHex;
}

/** The key pair at `paths` (made if absent), with its public half rewritten when it does not match. */
export async function loadKeyPair(paths: KeyPairPaths): Promise<Clerk> {
  if (!existsSync(paths.privateKey)) await writeKeyPair(paths);
  const privateKey = createPrivateKey(await readFile(paths.privateKey, 'utf8'));
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${paths.privateKey} does not hold an ed25519 key`);
  const publicKeyHex = rawPublicKeyHex(privateKey);
  const published = existsSync(paths.publicKey) ? (await readFile(paths.publicKey, 'utf8')).trim() : '';
  if (published !== publicKeyHex) await writeAtomically(paths.publicKey, `${publicKeyHex}\n`, 0o644);
  return { publicKeyHex, sign: (bytes) => sign(null, bytes, privateKey) };
}

/** Writes a new clerk key pair into `dataDir`. */
export async function writeClerkKeys(dataDir: string): Promise<void> {
  await writeKeyPair(clerkPaths(dataDir));
}

export function loadClerk(dataDir: string): Promise<Clerk> {
  return loadKeyPair(clerkPaths(dataDir));
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
