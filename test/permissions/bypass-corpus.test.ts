import { beforeAll, describe, expect, it } from "vitest";
import { loadBashParser } from "../../src/permissions/bash-parser.js";
import { evaluatePermission } from "../../src/permissions/evaluate.js";
import { emptyRules, type PermissionRules } from "../../src/permissions/types.js";
import { readCorpus } from "./corpus.js";

beforeAll(() => loadBashParser());

const home = "/home/me";
const workspace = "/home/me/project";
const scratch = "/home/me/scratch";
const bypasses = readCorpus("bypasses");
const safe = readCorpus("safe");

const judge = (command: string, sandboxed: boolean, rules: PermissionRules = emptyRules()) =>
  evaluatePermission(
    "bash",
    { command: command.replaceAll("SCRATCH", scratch) },
    rules,
    workspace,
    {
      home,
      sandboxed,
    },
  );
const label = (entry: { command: string; line: number }) =>
  `${entry.line}: ${entry.command.replace(/\n/g, "\\n")}`;

describe("the bypass corpus", () => {
  it("holds well over a hundred and fifty commands, the deny list's own among them", () => {
    expect(bypasses.length).toBeGreaterThan(200);
    expect(bypasses.filter((entry) => entry.off === "deny").length).toBeGreaterThan(60);
  });

  it.each(bypasses.map((entry) => [label(entry), entry] as const))(
    "without the sandbox: %s",
    (_, entry) => {
      const verdict = judge(entry.command, false);
      expect(verdict.decision).not.toBe("allow");
      expect(verdict.decision).toBe(entry.off);
    },
  );

  it.each(bypasses.map((entry) => [label(entry), entry] as const))(
    "in the sandbox: %s",
    (_, entry) => {
      const verdict = judge(entry.command, true);
      expect(verdict.decision).toBe(entry.on);
      if (entry.on === "deny") expect(verdict.reason).toContain("built-in deny list");
    },
  );

  it("keeps its deny list whatever the user allows", () => {
    const everything = { ...emptyRules(), allow: ["Bash"] };
    for (const entry of bypasses.filter((item) => item.on === "deny")) {
      expect(judge(entry.command, false, everything).decision, label(entry)).toBe("deny");
      expect(judge(entry.command, true, everything).decision, label(entry)).toBe("deny");
    }
  });

  it("in the sandbox, still asks where the user's ask rules say so", () => {
    const askRm = { ...emptyRules(), ask: ["Bash(rm:*)"] };
    expect(judge("rm -rf SCRATCH", true, askRm).decision).toBe("ask");
    expect(judge("sh -c 'rm -rf SCRATCH'", true, askRm).decision).toBe("ask");
    const denyCurl = { ...emptyRules(), deny: ["Bash(curl:*)"] };
    expect(judge("curl -s http://127.0.0.1:8080/", true, denyCurl).decision).toBe("deny");
  });
});

describe("the safe corpus", () => {
  it("holds the ordinary commands of a developer's day", () => {
    expect(safe.length).toBeGreaterThanOrEqual(40);
    expect(safe.filter((entry) => entry.off === "allow").length).toBeGreaterThanOrEqual(40);
  });

  it.each(safe.map((entry) => [label(entry), entry] as const))(
    "runs without a question in the sandbox: %s",
    (_, entry) => {
      expect(judge(entry.command, true)).toEqual({
        decision: "allow",
        reason: "bash runs in the sandbox",
      });
    },
  );

  it.each(safe.map((entry) => [label(entry), entry] as const))(
    "without the sandbox, read-only ones run and none is denied: %s",
    (_, entry) => {
      const verdict = judge(entry.command, false);
      expect(verdict.decision).toBe(entry.off);
      if (entry.off === "ask") expect(verdict.reason).toContain("without the sandbox");
    },
  );

  it("runs what the user's allow rules cover without the sandbox", () => {
    const rules = {
      ...emptyRules(),
      allow: ["Bash(npm test)", "Bash(npm run build:*)", "Bash(make:*)"],
    };
    expect(judge("npm test", false, rules).decision).toBe("allow");
    expect(judge("npm run build && git status", false, rules).decision).toBe("allow");
    expect(judge("make && curl -s x | sh", false, rules).decision).toBe("ask");
  });
});
