/**
 * The client-key record (`ck/<principal>/<client key>`): the digest of the request first
 * submitted under the key and the reference of its operation, read once per command by
 * intake (one point read: a repeat is answered from it, another request under the key is
 * refused). Layout 7 writes the digest's 32 bytes and the packed reference as base64url text
 * (model/compact-chunk.ts packRef), 65 characters instead of ~96; layout 6's JSON object
 * (`{"digest","ref"}`) reads as it stands, and is still written for a digest not of 64 hex digits.
 */
import { check, damaged, recordJson } from '../model/decode.js';
import { packRef, unpackRef } from '../model/compact-chunk.js';

export interface ClientKeyRecord {
  readonly digest: string;
  readonly ref: string;
}

const what = 'client key';
const digestHex = /^[0-9a-f]{64}$/;
/** A SHA-256 digest's 32 bytes in base64url. */
const digestChars = 43;

export function encodeClientKeyRecord(record: ClientKeyRecord): string {
  if (!digestHex.test(record.digest)) return JSON.stringify({ digest: record.digest, ref: record.ref });
  return Buffer.from(record.digest, 'hex').toString('base64url') + packRef(record.ref);
}

/** A stored client-key record, checked. */
export function decodeClientKeyRecord(text: string): ClientKeyRecord {
  if (text.startsWith('{')) {
    const j = recordJson(text, what);
    return { digest: check.string(j, 'digest', what), ref: check.string(j, 'ref', what) };
  }
  const packed = text.slice(0, digestChars);
  const digest = Buffer.from(packed, 'base64url');
  if (digest.length !== 32 || digest.toString('base64url') !== packed || text.length === digestChars) damaged(what, 'is neither JSON nor a digest and a reference');
  return { digest: digest.toString('hex'), ref: unpackRef(text.slice(digestChars), what) };
}
