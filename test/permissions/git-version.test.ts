/** `git --version` only prints: the gate lets it run outside the sandbox without asking. */
import { beforeAll, describe, expect, it } from "vitest";
import { loadBashParser } from "../../src/permissions/bash-parser.js";
import { evaluatePermission } from "../../src/permissions/evaluate.js";
import { gitNotReadOnly } from "../../src/permissions/read-only-git.js";
import { emptyRules } from "../../src/permissions/types.js";

beforeAll(() => loadBashParser());

describe("git --version", () => {
  it("is read-only, while options that reconfigure git still are not", () => {
    expect(gitNotReadOnly(["--version"])).toBeUndefined();
    const verdict = evaluatePermission(
      "bash",
      { command: "git --version" },
      emptyRules(),
      "/work/space",
      {},
    );
    expect(verdict.decision).toBe("allow");
    expect(gitNotReadOnly(["-c", "core.pager=sh", "log"])).toContain("other configuration");
    expect(gitNotReadOnly(["--exec-path=/x", "status"])).toContain("other configuration");
  });
});
