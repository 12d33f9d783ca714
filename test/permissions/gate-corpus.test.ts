/**
 * The gate corpus (test/permissions/corpus/gate.txt): a few hundred commands, each with the
 * verdict expected unsandboxed, sandboxed, and sandboxed with a person to answer. Ordinary
 * developer commands run unasked in the sandbox and, when read-only, outside it; expansions
 * the gate cannot know, abbreviated options and secret spellings ask; the deny list denies.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadBashParser } from "../../src/permissions/bash-parser.js";
import { type EvaluateOptions, evaluatePermission } from "../../src/permissions/evaluate.js";
import { emptyRules } from "../../src/permissions/types.js";
import { readCorpus } from "./corpus.js";

beforeAll(() => loadBashParser());

const home = "/home/me";
const workspace = "/home/me/project";
const entries = readCorpus("gate");
const judge = (command: string, options: EvaluateOptions) =>
  evaluatePermission("bash", { command }, emptyRules(), workspace, { home, ...options });
const cases = entries.map(
  (entry) => [`${entry.line}: ${entry.command.replace(/\n/g, "\\n")}`, entry] as const,
);

describe("the gate corpus", () => {
  it("holds a few hundred commands of every kind", () => {
    expect(entries.length).toBeGreaterThanOrEqual(300);
    const count = (off: string, on: string, asking: string) =>
      entries.filter((entry) => entry.off === off && entry.on === on && entry.asking === asking)
        .length;
    expect(count("allow", "allow", "allow")).toBeGreaterThanOrEqual(80);
    expect(count("deny", "deny", "deny")).toBeGreaterThanOrEqual(50);
    expect(count("ask", "allow", "ask")).toBeGreaterThanOrEqual(25);
    expect(count("ask", "allow", "allow")).toBeGreaterThanOrEqual(120);
  });

  it.each(cases)("unsandboxed: %s", (_, entry) => {
    expect(judge(entry.command, { sandboxed: false }).decision).toBe(entry.off);
  });

  it.each(cases)("sandboxed, headless: %s", (_, entry) => {
    expect(judge(entry.command, { sandboxed: true }).decision).toBe(entry.on);
  });

  it.each(cases)("sandboxed, a person can answer: %s", (_, entry) => {
    const verdict = judge(entry.command, { sandboxed: true, askBeforeDestroying: true });
    expect(verdict.decision).toBe(entry.asking);
  });
});
