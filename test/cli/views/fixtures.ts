/** Wire values the view tests render. */
import type { Movement, OperationView, Statement, TrialBalance } from '../../../cli/api.js';

export const balanced: TrialBalance = { accounts: 4, rows: [{ asset: 'EUR', openings: '0', layers: { available: '0', reserved: '0', encumbered: '0' } }, { asset: 'USD', openings: '0', layers: { available: '0', reserved: '0', encumbered: '0' } }], unbalanced: [], view: 42 };
export const unbalanced: TrialBalance = { accounts: 4, rows: [{ asset: 'USD', openings: '-100', layers: { available: '-100', reserved: '0', encumbered: '0' } }], unbalanced: [{ currency: 1, layer: 43 }], view: 43 };

export const movement = (seq: number, amount: string, direction: 'debit' | 'credit' = 'credit'): Movement => ({
  account: 'did:ledger:acct:alice',
  amount,
  asset: 'USD',
  at: Date.UTC(2026, 0, 2, 3, 4, 5),
  authorities: [{ credential: 'did:ledger:cred:op', grant: null, kind: 'operator', on_behalf_of: null, principal: 'did:ledger:id:operator' }],
  balance: 'available',
  counterparty: 'did:ledger:acct:bob',
  direction,
  kind: 'transfer',
  operation: `op_${seq}`,
  seq,
  status: 'completed',
});

export const statement: Statement = {
  account: 'did:ledger:acct:alice',
  asset: 'USD',
  closed: true,
  from: Date.UTC(2026, 0, 1),
  to: Date.UTC(2026, 1, 1),
  from_seq: 3,
  to_seq: 4,
  opening: { available: '100', reserved: '0', encumbered: '0' },
  closing: { available: '340282366920938463463374607431768211455', reserved: '5', encumbered: '0' },
  movements: [movement(3, '250'), movement(4, '10', 'debit')],
};

export const operation = (ref: string, state: string, command = 'transfer', error?: { error: string; description: string }): OperationView => ({
  operation_reference: ref,
  command,
  state,
  terminal: ['Completed', 'Rejected', 'Expired', 'Captured', 'Released'].includes(state),
  submitted_at: Date.UTC(2026, 0, 2),
  decided_at: state === 'Received' ? null : Date.UTC(2026, 0, 2, 0, 0, 1),
  client_key: `key-${ref}`,
  ...(error === undefined ? {} : { error }),
});

/** ledgerd's start in `metricsSample`: 2026-01-02T00:00:00Z. */
export const metricsStartS = 1_767_312_000;
/** A `/metrics` reply with every name the dashboard reads. */
export const metricsSample = `# HELP ledgerd_backlog_commands Commands acknowledged and not yet decided.
# TYPE ledgerd_backlog_commands gauge
ledgerd_backlog_commands 7
# HELP ledgerd_decision_latency_seconds From submission to decision.
# TYPE ledgerd_decision_latency_seconds histogram
ledgerd_decision_latency_seconds_bucket{le="0.001"} 0
ledgerd_decision_latency_seconds_bucket{le="0.005"} 400
ledgerd_decision_latency_seconds_bucket{le="0.01"} 900
ledgerd_decision_latency_seconds_bucket{le="0.05"} 990
ledgerd_decision_latency_seconds_bucket{le="0.1"} 1000
ledgerd_decision_latency_seconds_bucket{le="+Inf"} 1000
ledgerd_decision_latency_seconds_sum 4.2
ledgerd_decision_latency_seconds_count 1000
# TYPE ledgerd_decisions_total counter
ledgerd_decisions_total{state="Completed"} 950
ledgerd_decisions_total{state="Rejected"} 50
# TYPE ledgerd_rejections_total counter
ledgerd_rejections_total{code="ERR-InsufficientAvailable"} 40
ledgerd_rejections_total{code="ERR-BoundExceeded"} 10
# TYPE ledgerd_build_info gauge
ledgerd_build_info{version="0.2.0"} 1
# TYPE process_start_time_seconds gauge
process_start_time_seconds ${metricsStartS}
`;
