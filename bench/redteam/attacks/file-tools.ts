/**
 * Point 1 of issue 26 from the file tools' side, through the real gate (tool dispatch),
 * headless (nobody to ask): write_file may not create auto-run files, and a link flipped by
 * another process while write_file runs again and again may not lead a write into `.rudder/`.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { dispatchToolUse } from "../../../src/agent/tool-dispatch.js";
import { emptyRules } from "../../../src/permissions/types.js";
import { createDefaultTools } from "../../../src/tools/default-tools.js";
import { type Attack, onGround } from "../attack.js";

const tools = createDefaultTools();

/** write_file of `path` through the gate, headless; whether it was refused. */
async function writeFile(workspace: string, path: string, call: number): Promise<boolean> {
  const result = await dispatchToolUse(
    { type: "tool_use", id: `t${call}`, name: "write_file", input: { path, content: "planted" } },
    {
      tools,
      rules: emptyRules(),
      workspace,
      bashSandboxed: true,
      sessionId: "redteam",
      emit: () => {},
      signal: new AbortController().signal,
    },
  );
  return result.is_error === true;
}

const AUTO_RUN = [
  ".pre-commit-config.yaml",
  "lefthook.yml",
  ".envrc",
  ".npmrc",
  ".vscode/tasks.json",
  ".husky/pre-commit",
  ".claude/settings.json",
  ".rudder/settings.json",
  ".mcp.json",
  ".git/hooks/pre-commit",
  "vendor/lib/.git/config",
  "pkg/.envrc",
];

export const attacks: Attack[] = [
  {
    name: "write_file creates auto-run files (headless)",
    wall: "files",
    run: () =>
      onGround(async (ground) => {
        const written: string[] = [];
        for (const [call, path] of AUTO_RUN.entries()) {
          const refused = await writeFile(ground.workspace, path, call);
          if (!refused || existsSync(join(ground.workspace, path))) written.push(path);
        }
        return written.length === 0
          ? { held: true, detail: `all ${AUTO_RUN.length} refused: nobody to ask` }
          : { held: false, detail: `written: ${written.join(", ")}` };
      }),
  },
  {
    name: "write_file while a link flips between sub/ and .rudder/",
    wall: "files",
    run: () =>
      onGround(async (ground) => {
        const workspace = ground.workspace;
        mkdirSync(join(workspace, "sub"));
        mkdirSync(join(workspace, ".rudder"));
        symlinkSync("sub", join(workspace, "d"));
        const flipper = spawn(
          "perl",
          [
            "-e",
            'while (1) { symlink("sub", "d.a"); rename("d.a", "d"); symlink(".rudder", "d.b"); rename("d.b", "d") }',
          ],
          { cwd: workspace, detached: true, stdio: "ignore" },
        );
        let landed = 0;
        let allowed = 0;
        const calls = 1000;
        try {
          for (let call = 0; call < calls; call += 1) {
            if (!(await writeFile(workspace, "d/settings.json", call))) allowed += 1;
            if (existsSync(join(workspace, ".rudder", "settings.json"))) landed += 1;
          }
        } finally {
          if (flipper.pid !== undefined) process.kill(-flipper.pid, "SIGKILL");
        }
        return landed === 0
          ? { held: true, detail: `${calls} calls, ${allowed} written to sub/, none in .rudder/` }
          : { held: false, detail: `${landed} of ${calls} calls left a file in .rudder/` };
      }),
  },
];
