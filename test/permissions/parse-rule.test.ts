import { describe, expect, it } from "vitest";
import {
  parsePermissionRule,
  rulesFromToolLists,
  splitToolList,
  validatePermissionRules,
} from "../../src/permissions/parse-rule.js";

describe("parsePermissionRule", () => {
  it("reads bare tools and specifiers, mapping Claude Code's names to rudder's", () => {
    expect(parsePermissionRule("Bash")).toEqual({
      ok: true,
      rule: { text: "Bash", tools: ["bash"], specifier: undefined },
    });
    expect(parsePermissionRule(" Bash(npm run test:*) ")).toEqual({
      ok: true,
      rule: { text: "Bash(npm run test:*)", tools: ["bash"], specifier: "npm run test:*" },
    });
    expect(parsePermissionRule("Bash(*)")).toMatchObject({
      ok: true,
      rule: { specifier: undefined },
    });
    expect(parsePermissionRule("Read(./secrets/**)")).toMatchObject({
      ok: true,
      rule: { tools: ["read_file", "glob"], specifier: "./secrets/**" },
    });
    expect(parsePermissionRule("Edit")).toMatchObject({
      ok: true,
      rule: { tools: ["edit_file", "write_file"] },
    });
    expect(parsePermissionRule("Write(src/**)")).toMatchObject({
      ok: true,
      rule: { tools: ["write_file"] },
    });
    expect(parsePermissionRule("Glob")).toMatchObject({ ok: true, rule: { tools: ["glob"] } });
    expect(parsePermissionRule("edit_file")).toMatchObject({
      ok: true,
      rule: { tools: ["edit_file"] },
    });
    expect(parsePermissionRule("WebFetch(domain:example.com)")).toMatchObject({
      ok: true,
      rule: { tools: [] },
    });
    expect(parsePermissionRule("mcp__github__create_issue")).toMatchObject({
      ok: true,
      rule: { tools: [] },
    });
  });

  it.each([
    ["", "empty"],
    ["Bash(npm", "closing parenthesis"],
    ["Bash(ls) extra", "closing parenthesis"],
    ["Bash()", "empty specifier"],
    ["Bash npm", "not a rule"],
    ["(ls)", "not a rule"],
    ["Bash(foo:*bar)", ":* may only end"],
  ])("reports %j as malformed", (text, message) => {
    const parsed = parsePermissionRule(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(message);
  });

  it("validates whole rule sets, naming the list", () => {
    expect(validatePermissionRules({ allow: ["Bash(ls"], ask: [], deny: ["Read", ""] })).toEqual([
      "permissions.deny: The rule is empty.",
      expect.stringContaining("permissions.allow:"),
    ]);
  });
});

describe("tool lists from the command line", () => {
  it("split on commas and spaces outside parentheses", () => {
    expect(splitToolList("Bash(git log:*) Read,Edit  Bash(npm run test, lint)")).toEqual([
      "Bash(git log:*)",
      "Read",
      "Edit",
      "Bash(npm run test, lint)",
    ]);
  });

  it("become allow and deny rules", () => {
    expect(rulesFromToolLists(["Read,Glob", "Bash(git status)"], ["Bash(rm:*) Write"])).toEqual({
      allow: ["Read", "Glob", "Bash(git status)"],
      ask: [],
      deny: ["Bash(rm:*)", "Write"],
    });
  });
});
