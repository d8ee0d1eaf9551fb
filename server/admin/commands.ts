/**
 * The operator's commands over the store: accounts, balances, limits, model allow-lists,
 * agreements and API keys. Each command takes its parsed arguments and returns the text
 * to print; a mistake in the input is a UsageError (the CLI prints the usage with it).
 */
import { CATALOG_COMMANDS } from "./catalog-commands.ts";
import { issueApiKey } from "../store/api-keys.ts";
import { formatMoney, parseMoney } from "../store/money.ts";
import type { Account, ApiKey, Store } from "../store/store.ts";

export class UsageError extends Error {
  override name = "UsageError";
}

export interface CommandArgs {
  /** Words after the command's own (`acme` in `accounts create acme`). */
  positionals: string[];
  options: {
    balance?: string;
    rpm?: string;
    budget?: string;
    account?: string;
    "payment-method"?: boolean;
  };
}

interface Command {
  usage: string;
  run(store: Store, args: CommandArgs): Promise<string>;
}

/** Account ids go into URL paths and key secrets: lower-case letters, digits and dashes. */
const ACCOUNT_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;

export const COMMANDS: Record<string, Command> = {
  "accounts create": {
    usage: "accounts create <id> [--balance 100.00] [--payment-method]",
    async run(store, { positionals, options }) {
      const id = accountIdArg(positionals, 1);
      const account = await store.accounts.create({
        id,
        balanceMicros: options.balance === undefined ? undefined : amountArg(options.balance, "--balance"),
        hasPaymentMethod: options["payment-method"] ?? false,
      });
      return `Created account ${account.id}.\n${describeAccount(account)}`;
    },
  },
  "accounts list": {
    usage: "accounts list",
    async run(store, { positionals }) {
      exactly(positionals, 0);
      const accounts = await store.accounts.list();
      return accounts.length === 0 ? "No accounts." : accounts.map(describeAccount).join("\n");
    },
  },
  "accounts suspend": {
    usage: "accounts suspend <id>",
    run: (store, { positionals }) => update(store, accountIdArg(positionals, 1), { suspended: true }),
  },
  "accounts unsuspend": {
    usage: "accounts unsuspend <id>",
    run: (store, { positionals }) => update(store, accountIdArg(positionals, 1), { suspended: false }),
  },
  "balance set": {
    usage: "balance set <id> <amount>",
    run: (store, { positionals }) => {
      exactly(positionals, 2);
      return update(store, accountIdArg(positionals, 2), { balanceMicros: amountArg(positionals[1] ?? "", "amount") });
    },
  },
  "limits set": {
    usage: "limits set <id> [--rpm N|none] [--budget AMOUNT|none]   (budget per UTC day)",
    run: (store, { positionals, options }) => {
      const id = accountIdArg(positionals, 1);
      if (options.rpm === undefined && options.budget === undefined)
        throw new UsageError("Give --rpm, --budget or both.");
      return update(store, id, {
        requestsPerMinute: options.rpm === undefined ? undefined : rpmArg(options.rpm),
        budgetMicros: options.budget === undefined ? undefined : budgetArg(options.budget),
      });
    },
  },
  "models allow": {
    usage: "models allow <id> <model>...   (the account may call only these models)",
    run: (store, { positionals }) => {
      const [id, ...models] = positionals;
      if (models.length === 0) throw new UsageError("Name at least one model.");
      return update(store, accountId(id ?? ""), { allowedModels: models });
    },
  },
  "models allow-all": {
    usage: "models allow-all <id>",
    run: (store, { positionals }) => update(store, accountIdArg(positionals, 1), { allowedModels: null }),
  },
  "agreements accept": {
    usage: "agreements accept <id> <version>",
    run: (store, { positionals }) => {
      exactly(positionals, 2);
      return update(store, accountIdArg(positionals, 2), { acceptedAgreementVersion: positionals[1] ?? "" });
    },
  },
  "payment-method set": {
    usage: "payment-method set <id> on|off",
    run: (store, { positionals }) => {
      exactly(positionals, 2);
      return update(store, accountIdArg(positionals, 2), { hasPaymentMethod: onOffArg(positionals[1] ?? "") });
    },
  },
  "fine-tuning enable": {
    usage: "fine-tuning enable <id>",
    run: (store, { positionals }) => update(store, accountIdArg(positionals, 1), { fineTuningEnabled: true }),
  },
  "fine-tuning disable": {
    usage: "fine-tuning disable <id>",
    run: (store, { positionals }) => update(store, accountIdArg(positionals, 1), { fineTuningEnabled: false }),
  },
  "keys create": {
    usage: "keys create --account <id>",
    async run(store, { positionals, options }) {
      exactly(positionals, 0);
      const { key, secret } = await issueApiKey(store, accountOption(options.account));
      return `Created ${key.id} for account ${key.accountId}. The key is shown only this once; store it now:\n${secret}`;
    },
  },
  "keys list": {
    usage: "keys list --account <id>",
    async run(store, { positionals, options }) {
      exactly(positionals, 0);
      const keys = await store.apiKeys.list(accountOption(options.account));
      return keys.length === 0 ? "No keys." : keys.map(describeKey).join("\n");
    },
  },
  "keys revoke": {
    usage: "keys revoke <keyId>",
    async run(store, { positionals }) {
      exactly(positionals, 1);
      const keyId = positionals[0] ?? "";
      if (!/^key_[A-Za-z0-9_]+$/.test(keyId))
        throw new UsageError(`"${keyId}" is not a key id (key_…); see \`keys list\`.`);
      return `Revoked.\n${describeKey(await store.apiKeys.revoke(keyId))}`;
    },
  },
};

/** The usage of every command, or with `group` (`limits`) of that group's commands only. */
export function usageText(group?: string): string {
  const lines = Object.entries({ ...COMMANDS, ...CATALOG_COMMANDS })
    .filter(([name]) => group === undefined || name.startsWith(`${group} `))
    .map(([, c]) => `  npm run admin -- ${c.usage}`);
  return ["Usage (the store is DATA_DIR/service.db; DATA_DIR defaults to ./data):", ...lines].join("\n");
}

/** Whether `group` (`limits`, `accounts`) is the first word of some command. */
export function isCommandGroup(group: string): boolean {
  return Object.keys({ ...COMMANDS, ...CATALOG_COMMANDS }).some((name) => name.startsWith(`${group} `));
}

async function update(store: Store, id: string, patch: Parameters<Store["accounts"]["update"]>[1]): Promise<string> {
  return describeAccount(await store.accounts.update(id, patch));
}

function describeAccount(a: Account): string {
  const fields = [
    a.suspended ? "SUSPENDED" : "active",
    `balance ${formatMoney(a.balanceMicros)}`,
    `budget/day ${a.budgetMicros === null ? "none" : formatMoney(a.budgetMicros)}`,
    `rpm ${a.requestsPerMinute ?? "none"}`,
    `models ${a.allowedModels === null ? "all" : a.allowedModels.join(",")}`,
    `agreement ${a.acceptedAgreementVersion ?? "none"}`,
    `payment-method ${a.hasPaymentMethod ? "on" : "off"}`,
    `fine-tuning ${a.fineTuningEnabled ? "enabled" : "disabled"}`,
  ];
  return `${a.id}  ${fields.join("  ")}`;
}

function describeKey(k: ApiKey): string {
  const state = k.revokedAt === null ? "active" : `revoked ${k.revokedAt.toISOString()}`;
  return `${k.id}  ${k.accountId}  ${k.hint}  created ${k.createdAt.toISOString()}  ${state}`;
}

function exactly(positionals: string[], count: number): void {
  if (positionals.length !== count) throw new UsageError(`Expected ${count} argument(s), got ${positionals.length}.`);
}

/** The first positional as an account id, after checking the count. */
function accountIdArg(positionals: string[], count: number): string {
  exactly(positionals, count);
  return accountId(positionals[0] ?? "");
}

function accountOption(value: string | undefined): string {
  if (value === undefined) throw new UsageError("--account <id> is required.");
  return accountId(value);
}

function accountId(value: string): string {
  if (!ACCOUNT_ID.test(value))
    throw new UsageError(`"${value}" is not an account id: 1-64 of a-z, 0-9 and -, starting with a letter or digit.`);
  return value;
}

function amountArg(value: string, what: string): number {
  try {
    return parseMoney(value);
  } catch (error) {
    throw new UsageError(`${what}: ${(error as Error).message}`);
  }
}

function rpmArg(value: string): number | null {
  if (value === "none") return null;
  if (!/^[1-9][0-9]{0,8}$/.test(value))
    throw new UsageError(`--rpm: "${value}" is not a whole number of at least 1 (or none).`);
  return Number(value);
}

function budgetArg(value: string): number | null {
  if (value === "none") return null;
  const micros = amountArg(value, "--budget");
  if (micros < 0) throw new UsageError("--budget cannot be negative.");
  return micros;
}

function onOffArg(value: string): boolean {
  if (value !== "on" && value !== "off") throw new UsageError(`Expected on or off, got "${value}".`);
  return value === "on";
}
