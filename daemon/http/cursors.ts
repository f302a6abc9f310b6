/**
 * Listing cursors as the daemon hands them out: the kernel's position text (hex) followed by a
 * MAC under a daemon key over the listing it belongs to and that text. A cursor the daemon did
 * not issue, or issued for another listing, is refused before any of it is read as a
 * position (issue 20: a forged position must be a refusal, never an internal error).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { refuse } from '../../src/errors.js';

/** Hex digits of the MAC a cursor ends with (128 bits). */
export const cursorMacHexLength = 32;

export class CursorSeal {
  constructor(private readonly key: Uint8Array) {}

  /** `listing` names what the cursor pages through (route and subject), so it is not accepted by another. */
  seal(listing: string, position: string): string {
    return position + this.mac(listing, position);
  }

  /** The position a sealed cursor names; refused (ERR-MalformedCommand) unless this daemon sealed it for `listing`. */
  open(listing: string, cursor: string): string {
    const position = cursor.slice(0, -cursorMacHexLength);
    const given = Buffer.from(cursor.slice(-cursorMacHexLength), 'utf8');
    const expected = Buffer.from(this.mac(listing, position), 'utf8');
    if (position.length === 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      refuse('ERR-MalformedCommand', 'cursor is not one this service issued for this listing');
    }
    return position;
  }

  private mac(listing: string, position: string): string {
    return createHmac('sha256', this.key).update(`${listing}\n${position}`).digest('hex').slice(0, cursorMacHexLength);
  }
}
