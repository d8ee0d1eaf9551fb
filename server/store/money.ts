/**
 * Money as integer micro-units (1 unit = 1 000 000 micro-units). Decimal strings such as
 * "100.00" come in from operators and the price list; integers are what the store adds
 * up, so that no binary floating-point rounding ever reaches a balance.
 *
 * The largest safe amount is about 9 000 000 000 units, far above any balance here.
 */

export const MICROS_PER_UNIT = 1_000_000;
const MICROS = 1_000_000n;
const DECIMAL = /^(-?)(\d+)(?:\.(\d{1,6}))?$/;

/** "100.00" → 100000000. Throws a RangeError on anything but a plain decimal with at most 6 places. */
export function parseMoney(text: string): number {
  const match = DECIMAL.exec(text.trim());
  if (!match)
    throw new RangeError(`"${text}" is not an amount: write a decimal such as 100.00 (at most 6 decimal places)`);
  const [, sign, whole = "0", fraction = ""] = match;
  const micros = BigInt(whole) * MICROS + BigInt(fraction.padEnd(6, "0"));
  return toSafeNumber(sign === "-" ? -micros : micros, text);
}

/** 100000000 → "100.00"; keeps at least two decimals and drops trailing zeros beyond them. */
export function formatMoney(micros: number): string {
  if (!Number.isSafeInteger(micros)) throw new RangeError(`${micros} is not a whole number of micro-units`);
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_UNIT);
  const fraction = String(abs % MICROS_PER_UNIT)
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return `${sign}${whole}.${fraction}`;
}

/**
 * The cost of `tokens` at a price per million tokens ("0.10"), in micro-units, rounded up:
 * a charge never rounds down to zero, so many tiny calls cannot add up to free usage.
 */
export function costMicros(pricePerMillionTokens: string, tokens: number): number {
  if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`${tokens} is not a token count`);
  const pricePerMillion = BigInt(parseMoney(pricePerMillionTokens));
  const numerator = pricePerMillion * BigInt(tokens);
  const million = 1_000_000n;
  const cost = (numerator + million - 1n) / million;
  return toSafeNumber(cost, `${tokens} tokens at ${pricePerMillionTokens}`);
}

function toSafeNumber(micros: bigint, what: string): number {
  const value = Number(micros);
  if (!Number.isSafeInteger(value)) throw new RangeError(`${what} is too large an amount`);
  return value;
}
