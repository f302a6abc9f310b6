/** Layouts 4-6's account index entry (and compact journal line), which layout 7 reads beside its own (codec.ts encodeIndexedPosting), as those layouts wrote it. */
import type { Posting } from '../../src/model/model.js';

const enumIndex = (list: string, v: string) => list.split(' ').indexOf(v);

/** `[at, amount, direction, balance, kind, status, operation, counterparty, [[credential, grant, kind, on_behalf_of, principal], …], reference, available, reserved, encumbered]`. */
export const layout6Text = (p: Posting): string =>
  JSON.stringify([
    p.atMs, `${p.amountMinor}`, enumIndex('debit credit', p.direction), enumIndex('available reserved encumbered', p.layer),
    enumIndex('opening transfer reserve capture release expiry recovery deposit withdrawal', p.kind), enumIndex('held completed returned reversed opening', p.status), p.operation, p.counterparty,
    p.authorities.map((a) => [a.credential, a.grant, enumIndex('owner delegated operator issuance recovery', a.kind), a.onBehalfOf, a.principal]), p.reference,
    `${p.after.available}`, `${p.after.reserved}`, `${p.after.encumbered}`,
  ]);

/** A compact journal line in layout 6's form. */
export const layout6Line = (p: Posting): string => `${p.account}/${p.asset}/${layout6Text(p)}`;
