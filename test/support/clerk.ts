/** A clerk made in memory, for apps built without a data dir. */
import { generateKeyPairSync, sign } from 'node:crypto';
import { type Clerk, rawPublicKeyHex } from '../../daemon/clerk.js';

export function testClerk(): Clerk {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { publicKeyHex: rawPublicKeyHex(publicKey), sign: (bytes) => sign(null, bytes, privateKey) };
}
