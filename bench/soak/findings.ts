/**
 * What the soak found wrong, by kind: an acknowledged command missing or not as sent
 * (lost), a command with a second effect (doubled), and anything else the checks
 * refuse (a balance off its movements, an unbalanced trial balance, an odd reply).
 */
export const findingsKeptMax = 100;

export class Findings {
  lost = 0;
  doubled = 0;
  other = 0;
  /** The first findings' texts (all are counted). */
  readonly texts: string[] = [];

  private keep(text: string): void {
    if (this.texts.length < findingsKeptMax) this.texts.push(text);
  }

  readonly problem = (text: string): void => {
    this.other++;
    this.keep(text);
  };

  readonly lostCommand = (text: string): void => {
    this.lost++;
    this.keep(`lost: ${text}`);
  };

  readonly doubledCommand = (text: string): void => {
    this.doubled++;
    this.keep(`doubled: ${text}`);
  };

  get count(): number {
    return this.lost + this.doubled + this.other;
  }
}
