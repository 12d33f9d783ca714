/**
 * The file tools touch the path the gate judged, whatever a link does meanwhile (issue 26,
 * point 1): a background process flips `d` between `sub/` and the protected `.rudder/`
 * thousands of times while write_file `d/settings.json` is called again and again through
 * the gate, headless (nobody to ask). Not one write may land in `.rudder/`; writes that the
 * gate allowed land in `sub/`.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchToolUse } from "../../src/agent/tool-dispatch.js";
import { emptyRules } from "../../src/permissions/types.js";
import { createDefaultTools } from "../../src/tools/default-tools.js";
import { type OwnedProcess, startProcess } from "../helpers/owned-process.js";

let flipper: OwnedProcess | undefined;
let root: string | undefined;
afterEach(() => {
  flipper?.kill();
  flipper = undefined;
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describe("write_file against a link flipped meanwhile", () => {
  it("never writes into the protected folder", async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-write-race-")));
    const workspace = join(root, "work");
    mkdirSync(join(workspace, "sub"), { recursive: true });
    mkdirSync(join(workspace, ".rudder"));
    symlinkSync("sub", join(workspace, "d"));
    // Atomic swaps (a link renamed over the link), hundreds of thousands a second, so `d` always
    // exists and points one way or the other.
    flipper = startProcess(
      "perl",
      [
        "-e",
        'while (1) { symlink("sub", "d.a"); rename("d.a", "d"); symlink(".rudder", "d.b"); rename("d.b", "d") }',
      ],
      { cwd: workspace },
    );
    const tools = createDefaultTools();
    let written = 0;
    let refused = 0;
    for (let call = 0; call < 1000; call += 1) {
      const result = await dispatchToolUse(
        {
          type: "tool_use",
          id: `t${call}`,
          name: "write_file",
          input: { path: "d/settings.json", content: "{}" },
        },
        {
          tools,
          rules: emptyRules(),
          workspace,
          bashSandboxed: false,
          sessionId: "race",
          emit: () => {},
          signal: new AbortController().signal,
        },
      );
      if (result.is_error === true) refused += 1;
      else written += 1;
      expect(existsSync(join(workspace, ".rudder", "settings.json")), `call ${call}`).toBe(false);
    }
    expect(written).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    expect(existsSync(join(workspace, "sub", "settings.json"))).toBe(true);
  }, 60_000);
});
