/**
 * Examples for every command, keyed by its words: shown under `--help` and in the man page
 * (a test fails when a command has none). ACCT, OP and GRANT stand for identifiers.
 */
export const examples: Readonly<Record<string, readonly string[]>> = {
  'profile add': ['ledgerctl profile add prod --url https://ledger.example --token "$(cat operator.key)"', 'ledgerctl profile add prod --url https://ledger.example --force'],
  'profile use': ['ledgerctl profile use prod'],
  'profile list': ['ledgerctl profile list'],
  'profile show': ['ledgerctl profile show prod'],
  'profile remove': ['ledgerctl profile remove old'],
  'profile rename': ['ledgerctl profile rename prod prod.eu'],
  'auth challenge': ['ledgerctl auth challenge', 'ledgerctl auth challenge --purpose register --identity did:ledger:id:alice'],
  'auth login': ['ledgerctl --profile alice auth login', 'ledgerctl --profile bot auth login --api-key "$(cat bot.key)"'],
  'auth logout': ['ledgerctl --profile alice auth logout'],
  'auth whoami': ['ledgerctl auth whoami', 'ledgerctl auth whoami --field principal'],
  'credentials register': ['ledgerctl --profile alice credentials register --scheme webauthn-es256 --save-as alice-laptop', 'ledgerctl credentials register --scheme api-key --on-behalf-of did:ledger:id:alice --scope savings'],
  'identities create': ['ledgerctl identities create --scheme api-key --field result.api_key', 'ledgerctl identities create --scheme key --save-as alice'],
  'accounts open': ['ledgerctl accounts open --owner did:ledger:id:alice --save-as savings', 'ledgerctl accounts open --owner did:ledger:id:operator --kind treasury --treasury-limit USD=100000000'],
  'accounts show': ['ledgerctl accounts show savings', 'ledgerctl accounts show treasury:USD --field status'],
  'accounts balance': ['ledgerctl accounts balance savings', 'ledgerctl accounts balance ACCT --json'],
  'accounts list': ['ledgerctl accounts list --owner did:ledger:id:alice', 'ledgerctl accounts list --owner did:ledger:id:alice --all --json > accounts.ndjson'],
  'accounts custody': ['ledgerctl accounts custody savings'],
  'assets list': ['ledgerctl assets list'],
  'assets register': ['ledgerctl assets register GBP --kind fiat --precision 2'],
  'assets bind': ['ledgerctl assets bind USD --location 5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e'],
  'assets deprecate': ['ledgerctl assets deprecate GBP'],
  'aliases lookup': ['ledgerctl aliases lookup --source ledger --name treasury:USD', 'ledgerctl aliases lookup --source legacy --name alice-1 --field account'],
  'transfers create': [
    'ledgerctl transfers create --from treasury:USD --to savings --amount 1000 --asset USD',
    'ledgerctl transfers create --legs legs.json --client-key step-7',
    'ledgerctl transfers create --from ACCT --to ACCT --amount 5 --asset USD --no-wait --field operation_reference',
  ],
  'reservations create': ['ledgerctl reservations create --payer savings --amount 1234 --asset USD --deadline 2026-12-01T00:00:00Z'],
  'reservations capture': ['ledgerctl reservations capture OP --to merchant', 'ledgerctl reservations capture OP --to merchant --amount 1000'],
  'reservations release': ['ledgerctl reservations release OP'],
  'withdrawals create': [
    'ledgerctl withdrawals create --account savings --amount 2500 --asset USD --to cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd',
    'ledgerctl withdrawals create --account ACCT --amount 10 --asset USD --to-instance 2 --to-ref efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef --no-wait',
  ],
  'settlement status': ['ledgerctl settlement status', 'ledgerctl settlement status --field pending_instructions'],
  'settlement sync': ['ledgerctl settlement sync', 'ledgerctl settlement sync --field result.settlement.moved'],
  'settlement compare': ['ledgerctl settlement compare', 'ledgerctl settlement compare --field differs'],
  'settlement rescan': ['ledgerctl settlement rescan --from 1 --to 1000'],
  'settlement observe': ['ledgerctl settlement observe --seq 12 --digest DIGEST --instance 1'],
  'operations show': ['ledgerctl operations show OP', 'ledgerctl operations show OP --field state'],
  'operations wait': ['ledgerctl operations wait OP --timeout-ms 30000'],
  'grants issue': ['ledgerctl grants issue --principal did:ledger:id:agent --subject-account savings --ops transfer --per-operation 500', 'ledgerctl grants issue --terms terms.json'],
  'grants list': ['ledgerctl grants list --account savings', 'ledgerctl grants list --identity did:ledger:id:agent --all --json'],
  'grants revoke': ['ledgerctl grants revoke GRANT'],
  'ops backup': ['ledgerctl ops backup --out /srv/backups/book-$(date +%F).backup'],
  'ops issuance-grant': ['ledgerctl ops issuance-grant --principal did:ledger:id:operator --subject-account treasury:USD --ops transfer --per-operation 100000 --justification "ticket 42"'],
  'ops parties': ['ledgerctl ops parties'],
  'events tail': ['ledgerctl events tail', 'ledgerctl events tail --after 120 --count 10 --json'],
  statements: ['ledgerctl statements --account savings --asset USD --from 2026-11-01 --to 2026-12-01'],
  movements: ['ledgerctl movements --account savings', 'ledgerctl movements --identity did:ledger:id:alice --asset USD --all --json > movements.ndjson'],
  'trial-balance': ['ledgerctl trial-balance', 'ledgerctl trial-balance --asset USD --json'],
  dashboard: ['ledgerctl dashboard', 'ledgerctl --profile prod dashboard --refresh-ms 5000'],
  completion: ['source <(ledgerctl completion bash)', 'ledgerctl completion zsh > ~/.zfunc/_ledgerctl', 'ledgerctl completion fish > ~/.config/fish/completions/ledgerctl.fish'],
};

/** The examples of a command, by its words (`['accounts', 'open']`); none for an unknown path. */
export const examplesOf = (path: readonly string[]): readonly string[] => examples[path.join(' ')] ?? [];

/** The text `--help` shows after the options. */
export const examplesHelp = (lines: readonly string[]): string => (lines.length === 0 ? '' : `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
