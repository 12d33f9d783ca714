import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type Confirm,
  type DispatchContext,
  dispatchToolUse,
} from "../../src/agent/tool-dispatch.js";
import { emptyRules, type PermissionRules } from "../../src/permissions/types.js";
import { confirmForMode } from "../../src/protocol/permission-mode.js";
import { createDefaultTools } from "../../src/tools/default-tools.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-file-gate-")));
const home = join(root, "home");
const workspace = join(home, "project");
mkdirSync(join(workspace, ".git", "hooks"), { recursive: true });
mkdirSync(join(home, ".rudder"), { recursive: true });
writeFileSync(join(home, ".rudder", "token"), "gateway-token\n");
afterAll(() => rmSync(root, { recursive: true, force: true }));

function context(overrides: Partial<DispatchContext> = {}): DispatchContext {
  return {
    tools: createDefaultTools(),
    rules: emptyRules(),
    workspace,
    home,
    bashSandboxed: false,
    sessionId: "file-gate",
    emit: () => {},
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function call(
  name: string,
  input: Record<string, unknown>,
  overrides?: Partial<DispatchContext>,
) {
  const result = await dispatchToolUse(
    { type: "tool_use", id: "t", name, input },
    context(overrides),
  );
  return String(result.content);
}

describe("protected configuration paths", () => {
  it.each([
    ".rudder/settings.json",
    ".claude/settings.json",
    ".mcp.json",
    ".git/hooks/pre-commit",
    ".git/config",
    "vendor/lib/.git/config",
    ".vscode/tasks.json",
  ])("are not written headless: %s", async (path) => {
    const content = await call("write_file", { path, content: "#!/bin/sh\nrm -rf ~\n" });
    expect(content).toContain("Permission denied");
    expect(content).toContain("nobody can be asked");
    expect(existsSync(join(workspace, path))).toBe(false);
  });

  it("are written once a person confirms", async () => {
    const asked: string[] = [];
    const confirm: Confirm = async (request) => {
      asked.push(request.reason);
      return true;
    };
    const content = await call("write_file", { path: ".mcp.json", content: "{}" }, { confirm });
    expect(content).toContain("Created .mcp.json");
    expect(asked[0]).toContain(".mcp.json configures what runs");
    rmSync(join(workspace, ".mcp.json"));
  });

  it("are written without a question where an allow rule names them", async () => {
    const rules: PermissionRules = { ...emptyRules(), allow: ["Edit(.claude/skills/**)"] };
    const content = await call(
      "write_file",
      { path: ".claude/skills/notes/SKILL.md", content: "# Notes\n" },
      { rules },
    );
    expect(content).toContain("Created");
    const broad = { ...emptyRules(), allow: ["Edit"] };
    expect(
      await call("write_file", { path: ".claude/settings.json", content: "{}" }, { rules: broad }),
    ).toContain("Permission denied");
  });

  it("are not approved by a permission mode, only by a person", async () => {
    for (const mode of ["bypassPermissions", "acceptEdits"] as const) {
      const confirm = confirmForMode(() => mode, undefined);
      const content = await call(
        "write_file",
        { path: ".git/hooks/pre-push", content: "x" },
        { confirm },
      );
      expect(content, mode).toContain("Permission denied");
      const asked = { ...emptyRules(), ask: ["Write"] };
      const ordinary = await call(
        "write_file",
        { path: `${mode}.txt`, content: "x" },
        { confirm, rules: asked },
      );
      expect(ordinary, mode).toContain("Created");
    }
    const person = confirmForMode(
      () => "bypassPermissions",
      async () => true,
    );
    expect(
      await call("write_file", { path: ".git/hooks/pre-push", content: "x" }, { confirm: person }),
    ).toContain("Created");
    rmSync(join(workspace, ".git", "hooks", "pre-push"));
  });

  it("are judged by their real path when a link inside the workspace leads to them", async () => {
    symlinkSync(join(workspace, ".git", "hooks"), join(workspace, "hooks-link"));
    const content = await call("write_file", { path: "hooks-link/post-checkout", content: "x" });
    expect(content).toContain("Permission denied");
    expect(existsSync(join(workspace, ".git", "hooks", "post-checkout"))).toBe(false);
  });

  it("do not make ordinary files ask", async () => {
    expect(await call("write_file", { path: "src/git-notes.md", content: "x" })).toContain(
      "Created",
    );
    expect(await call("read_file", { path: ".git/config" })).not.toContain("Permission denied");
  });
});

describe("deny rules and links", () => {
  it("deny a read through a link into a denied folder", async () => {
    mkdirSync(join(workspace, "secrets"));
    writeFileSync(join(workspace, "secrets", "a.txt"), "s3cret");
    symlinkSync(join(workspace, "secrets"), join(workspace, "docs-link"));
    const rules = { ...emptyRules(), deny: ["Read(./secrets/**)"] };
    const content = await call("read_file", { path: "docs-link/a.txt" }, { rules });
    expect(content).toContain("Permission denied");
    expect(content).not.toContain("s3cret");
  });
});

describe("rudder's token", () => {
  it("is outside the workspace for the file tools", async () => {
    const content = await call("read_file", { path: join(home, ".rudder", "token") });
    expect(content).toContain("outside the workspace");
    expect(content).not.toContain("gateway-token");
  });

  it("is not read by bash without the sandbox, headless", async () => {
    for (const command of [
      "cat ~/.rudder/token",
      `cat ${home}/.rudder/token`,
      "cat $HOME/.rudder/token",
    ]) {
      const content = await call("bash", { command });
      expect(content).toContain("Permission denied");
      expect(content).not.toContain("gateway-token");
    }
  });

  it("is asked about when the workspace is the home itself", async () => {
    const content = await call("read_file", { path: ".rudder/token" }, { workspace: home });
    expect(content).toContain("holds credentials");
    expect(content).not.toContain("gateway-token");
  });
});

describe("headless asks", () => {
  it("become denials that carry the reason", async () => {
    const content = await call("bash", { command: "curl -s http://127.0.0.1:9/" });
    expect(content).toBe(
      "Permission denied: curl is not known to be read-only; without the sandbox, only read-only commands run without asking (needs confirmation, and nobody can be asked)",
    );
  });

  it("leave read-only commands running", async () => {
    expect(await call("bash", { command: "ls -a" })).toContain(".git");
  });
});
