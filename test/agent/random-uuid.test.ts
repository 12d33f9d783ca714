/** rudder's UUIDs (random-uuid.ts) have crypto.randomUUID's form and do not repeat. */
import { describe, expect, it } from "vitest";
import { randomUUID } from "../../src/agent/random-uuid.js";

const VERSION_4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("randomUUID", () => {
  it("makes version-4 UUIDs, distinct across many pool refills", () => {
    const made = Array.from({ length: 5000 }, () => randomUUID());
    for (const uuid of made) expect(uuid).toMatch(VERSION_4);
    expect(new Set(made).size).toBe(made.length);
  });

  it("spreads its bits: every hex digit of the random part takes many values", () => {
    const made = Array.from({ length: 2000 }, () => randomUUID().replaceAll("-", ""));
    for (const position of [0, 5, 13, 17, 31]) {
      const digits = new Set(made.map((uuid) => uuid[position]));
      expect(digits.size, `position ${position}`).toBeGreaterThan(12);
    }
  });
});
