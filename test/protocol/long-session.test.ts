import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { runSession } from "../../bench/long-session.js";

// The small version of bench/long-session.ts: the built stream-json child carries a scripted
// conversation (file reads every tenth turn, facts planted along the way) through a window the
// fake Messages API enforces, compacting several times, never refused as too long, and the
// final request still has every fact. The figures themselves are the bench's to print.

let scratch: string | undefined;
afterEach(() => {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

it("a 150-turn session in a 12,000-token window compacts, never overflows, keeps every fact", async () => {
  scratch = mkdtempSync(join(tmpdir(), "rudder-long-session-"));
  const shape = { turns: 150, window: 12_000, facts: 6 };
  const figures = await runSession(shape, true, scratch);
  expect(figures.failedTurns).toBe(0);
  expect(figures.overflows).toBe(0);
  expect(figures.fileReads).toBe(15);
  expect(figures.failedTools).toBe(0);
  expect(figures.compactions).toBeGreaterThanOrEqual(2);
  expect(figures.peakTokens).toBeLessThan(shape.window);
  expect(figures.factsKept).toBe(shape.facts);
  expect(figures.cachedTokens / figures.inputTokens).toBeGreaterThan(0.5);
}, 180_000);
