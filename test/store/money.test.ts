/** Money in integer micro-units: exact parsing, formatting and cost. */
import assert from "node:assert/strict";
import { describe, it } from "vitest";
import { costMicros, formatMoney, parseMoney } from "../../server/store/money.ts";

describe("money", () => {
  it("parses decimals exactly", () => {
    assert.equal(parseMoney("100.00"), 100_000_000);
    assert.equal(parseMoney("0.1"), 100_000);
    assert.equal(parseMoney("0.000001"), 1);
    assert.equal(parseMoney("-2.5"), -2_500_000);
    assert.equal(parseMoney("7"), 7_000_000);
  });

  it("rejects anything but a plain decimal with at most six places", () => {
    for (const text of ["", "abc", "1e3", "1.0000001", "1,00", "0x10", "1.", ".5"]) {
      assert.throws(() => parseMoney(text), RangeError, text);
    }
  });

  it("formats with at least two decimals", () => {
    assert.equal(formatMoney(100_000_000), "100.00");
    assert.equal(formatMoney(100_000), "0.10");
    assert.equal(formatMoney(1_234_567), "1.234567");
    assert.equal(formatMoney(1_000), "0.001");
    assert.equal(formatMoney(-5), "-0.000005");
    assert.equal(formatMoney(0), "0.00");
  });

  it("sums without floating-point drift", () => {
    const tenCents = parseMoney("0.10");
    const total = Array.from({ length: 3 }, () => tenCents).reduce((a, b) => a + b, 0);
    assert.equal(formatMoney(total), "0.30"); // 0.1 + 0.1 + 0.1 in floating point is 0.30000000000000004
  });

  it("works out a cost from a price per million tokens, rounding up", () => {
    assert.equal(costMicros("0.10", 1_000_000), 100_000);
    assert.equal(costMicros("0.10", 1_000), 100);
    assert.equal(costMicros("0.10", 5), 1); // 0.5 micro-units rounds up, never to zero
    assert.equal(costMicros("0.10", 0), 0);
    assert.equal(costMicros("0", 1_000_000), 0);
  });
});
