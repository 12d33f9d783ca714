import { describe, expect, it } from "vitest";
import { matcherProblem, matchesTool } from "../../src/hooks/matcher.js";

describe("matchesTool", () => {
  it("maps Claude Code's tool names to rudder's", () => {
    expect(matchesTool("PreToolUse", "Bash", "bash")).toBe(true);
    expect(matchesTool("PreToolUse", "Read", "read_file")).toBe(true);
    expect(matchesTool("PreToolUse", "Write", "write_file")).toBe(true);
    expect(matchesTool("PreToolUse", "Edit", "edit_file")).toBe(true);
    expect(matchesTool("PreToolUse", "MultiEdit", "edit_file")).toBe(true);
    expect(matchesTool("PostToolUse", "Glob", "glob")).toBe(true);
    expect(matchesTool("PreToolUse", "Bash", "read_file")).toBe(false);
  });

  it("matches rudder's own names too", () => {
    expect(matchesTool("PreToolUse", "bash", "bash")).toBe(true);
    expect(matchesTool("PreToolUse", "write_file|edit_file", "edit_file")).toBe(true);
  });

  it("treats | as alternatives of exact names", () => {
    expect(matchesTool("PreToolUse", "Edit|Write", "write_file")).toBe(true);
    expect(matchesTool("PreToolUse", "Edit|Write", "edit_file")).toBe(true);
    expect(matchesTool("PreToolUse", "Edit|Write", "bash")).toBe(false);
    expect(matchesTool("PreToolUse", "Edit", "edit_file_extra")).toBe(false);
  });

  it("matches everything with *, an empty string or no matcher", () => {
    for (const matcher of ["*", "", undefined]) {
      for (const tool of ["bash", "glob", "some_new_tool"]) {
        expect(matchesTool("PreToolUse", matcher, tool)).toBe(true);
      }
    }
  });

  it("treats other patterns as unanchored regexes", () => {
    expect(matchesTool("PreToolUse", "^(Read|Glob)$", "glob")).toBe(true);
    expect(matchesTool("PreToolUse", "^(Read|Glob)$", "bash")).toBe(false);
    expect(matchesTool("PreToolUse", ".*_file", "write_file")).toBe(true);
    expect(matchesTool("PreToolUse", "Notebook.*", "edit_file")).toBe(false);
  });

  it("never matches with a broken regex, and says why", () => {
    expect(matchesTool("PreToolUse", "Bash(", "bash")).toBe(false);
    expect(matcherProblem("Bash(")).toMatch(/not a valid regex/);
    expect(matcherProblem("Edit|Write")).toBeUndefined();
  });

  it("ignores matchers for UserPromptSubmit and Stop", () => {
    expect(matchesTool("UserPromptSubmit", "Bash", undefined)).toBe(true);
    expect(matchesTool("Stop", "nothing-like-this", undefined)).toBe(true);
  });
});
