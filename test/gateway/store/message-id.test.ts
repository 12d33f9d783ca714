/**
 * Message ids are version 7 UUIDs: valid UUIDs, carrying the time they were made, and in the
 * order they were made (so a store's index on them grows at its end), even many in one
 * millisecond.
 */
import { afterEach, expect, it, vi } from "vitest";
import { newMessageId } from "../../../src/gateway/store/message-id.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

it("makes version 7 UUIDs that carry the time they were made", () => {
  const before = Date.now();
  const id = newMessageId();
  const after = Date.now();
  expect(id).toMatch(UUID_V7);
  const millis = millisOf(id);
  expect(millis).toBeGreaterThanOrEqual(before);
  // A count that ran out within a millisecond may have borrowed a few.
  expect(millis).toBeLessThanOrEqual(after + 5);
});

afterEach(() => {
  vi.useRealTimers();
});

const millisOf = (id: string) => Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);

it("makes ids that sort in the order they were made, past 4096 in a millisecond", () => {
  // The clock held still: every id is made in the same millisecond.
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 60_000 });
  const held = Date.now();
  const ids = Array.from({ length: 10_000 }, () => newMessageId());
  expect(millisOf(ids[0] ?? "")).toBe(held);
  // The count ran out twice: the last ids borrowed the next milliseconds.
  expect(millisOf(ids.at(-1) ?? "")).toBeGreaterThan(held);
  for (const id of ids) expect(id).toMatch(UUID_V7);
  expect(new Set(ids).size).toBe(ids.length);
  const sorted = [...ids].sort();
  expect(sorted).toEqual(ids);
});
