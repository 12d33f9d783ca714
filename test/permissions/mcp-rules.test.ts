import { beforeAll, describe, expect, it } from "vitest";
import { loadBashParser } from "../../src/permissions/bash-parser.js";
import { evaluatePermission } from "../../src/permissions/evaluate.js";
import { parseMcpName } from "../../src/permissions/mcp-rule.js";
import { parsePermissionRule, validatePermissionRules } from "../../src/permissions/parse-rule.js";
import { emptyRules, type PermissionRules } from "../../src/permissions/types.js";

beforeAll(() => loadBashParser());

const WORKSPACE = "/work/project";

function decide(toolName: string, rules: Partial<PermissionRules>) {
  return evaluatePermission(toolName, { text: "hi" }, { ...emptyRules(), ...rules }, WORKSPACE);
}

describe("MCP permission rules", () => {
  it("parse in Claude Code's three forms", () => {
    expect(parseMcpName("mcp__github")).toEqual({ server: "github", tool: undefined });
    expect(parseMcpName("mcp__github__*")).toEqual({ server: "github", tool: undefined });
    expect(parseMcpName("mcp__github__create_issue")).toEqual({
      server: "github",
      tool: "create_issue",
    });
    expect(parseMcpName("mcp__a__b__c")).toEqual({ server: "a", tool: "b__c" });
    expect(parseMcpName("Bash")).toBeUndefined();
    expect(parsePermissionRule("mcp__github__*")).toMatchObject({
      ok: true,
      rule: { mcp: { server: "github", tool: undefined }, specifier: undefined },
    });
    expect(parsePermissionRule("mcp__github(*)")).toMatchObject({ ok: true });
    expect(validatePermissionRules({ ...emptyRules(), allow: ["mcp__github(create)"] })).toEqual([
      'permissions.allow: "mcp__github(create)": MCP rules take no specifier; write mcp__github alone.',
    ]);
  });

  it("ask by default, as Claude Code does for MCP tools (other tools stay allowed)", () => {
    expect(decide("mcp__fake__echo", {})).toEqual({
      decision: "ask",
      reason: "no permission rule matched this mcp__fake__echo call",
    });
    expect(decide("read_file", {}).decision).toBe("allow");
  });

  it.each([
    ["mcp__fake__echo", "mcp__fake__echo", "allow"],
    ["mcp__fake", "mcp__fake__echo", "allow"],
    ["mcp__fake__*", "mcp__fake__add", "allow"],
    ["mcp__fake__echo", "mcp__fake__add", "ask"],
    ["mcp__fake", "mcp__fakery__echo", "ask"],
    ["mcp__fak", "mcp__fake__echo", "ask"],
    ["mcp__other", "mcp__fake__echo", "ask"],
  ])("allow rule %s for %s: %s", (rule, toolName, decision) => {
    expect(decide(toolName, { allow: [rule] }).decision).toBe(decision);
  });

  it("deny before ask before allow, and other tools' rules do not reach MCP tools", () => {
    expect(decide("mcp__fake__echo", { allow: ["mcp__fake"], deny: ["mcp__fake__echo"] })).toEqual({
      decision: "deny",
      reason: "matches the deny rule mcp__fake__echo",
    });
    expect(decide("mcp__fake__add", { allow: ["mcp__fake"], deny: ["mcp__fake__echo"] })).toEqual({
      decision: "allow",
      reason: "matches the allow rule mcp__fake",
    });
    expect(
      decide("mcp__fake__echo", { allow: ["mcp__fake"], ask: ["mcp__fake__*"] }).decision,
    ).toBe("ask");
    expect(decide("mcp__fake__echo", { allow: ["Bash", "Read", "Edit"] }).decision).toBe("ask");
    expect(decide("bash", { deny: ["mcp__fake"] }).decision).toBe("allow");
  });
});
