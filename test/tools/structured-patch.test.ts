import { describe, expect, it } from "vitest";
import { structuredPatch } from "../../src/tools/structured-patch.js";

describe("structuredPatch", () => {
  it("is empty when nothing changed", () => {
    expect(structuredPatch("a\nb\n", "a\nb\n")).toEqual([]);
  });

  it("keeps up to three lines of context around the changed lines", () => {
    const before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
    expect(structuredPatch(before, after)).toEqual([
      {
        oldStart: 2,
        oldLines: 7,
        newStart: 2,
        newLines: 7,
        lines: [" 2", " 3", " 4", "-5", "+five", " 6", " 7", " 8"],
      },
    ]);
  });

  it("matches Claude Code's patch of a replace-all edit", () => {
    // Recorded from Claude Code 2.1.328: Edit o -> 0 with replace_all on "one\ntwo\nthree\n".
    expect(structuredPatch("one\ntwo\nthree\n", "0ne\ntw0\nthree\n")).toEqual([
      {
        oldStart: 1,
        oldLines: 3,
        newStart: 1,
        newLines: 3,
        lines: ["-one", "-two", "+0ne", "+tw0", " three"],
      },
    ]);
  });

  it("describes added and removed lines at the end", () => {
    expect(structuredPatch("a\n", "a\nb\n")).toEqual([
      { oldStart: 1, oldLines: 1, newStart: 1, newLines: 2, lines: [" a", "+b"] },
    ]);
    expect(structuredPatch("a\n", "")).toEqual([
      { oldStart: 1, oldLines: 1, newStart: 0, newLines: 0, lines: ["-a"] },
    ]);
  });
});
