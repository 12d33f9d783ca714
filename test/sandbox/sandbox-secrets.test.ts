/**
 * What a sandboxed command can never reach, with the real bubblewrap: host unix sockets (a
 * docker socket under $HOME), the model's credentials in its environment, the gateway's data
 * folder wherever it is, a secret folder made during the session, and the credentials of a
 * hidden folder holding the workspace. The home is outside /tmp, whose private copy would hide
 * things there for the wrong reason.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer, type LookupFunction, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Sandbox, type SandboxOptions } from "../../src/sandbox/sandbox.js";
import { sandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import type { SandboxSettings } from "../../src/sandbox/sandbox-settings.js";
import { unixSocketFilter } from "../../src/sandbox/unix-socket-filter.js";
import { runCommand } from "../../src/tools/run-command.js";
import { NO_BUBBLEWRAP } from "./sandbox-helpers.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A home under /var/tmp with `workspace` (relative to it) and a sandbox for that workspace. */
function setUp(
  workspaceInHome: string,
  settings: SandboxSettings = {},
  env: NodeJS.ProcessEnv = {},
  options: Omit<SandboxOptions, "env"> = {},
): {
  home: string;
  workspace: string;
  run: (command: string) => Promise<string>;
} {
  const home = realpathSync(mkdtempSync("/var/tmp/rudder-secrets-home-"));
  const workspace = join(home, workspaceInHome);
  mkdirSync(workspace, { recursive: true });
  const sandbox = new Sandbox(
    sandboxPolicy(settings, { workspace, home, rudderHome: join(home, ".rudder"), env }),
    { env: process.env, ...options },
  );
  cleanups.push(() => {
    sandbox.close();
    rmSync(home, { recursive: true, force: true });
  });
  return {
    home,
    workspace,
    run: async (command) =>
      (await runCommand(command, { cwd: workspace, timeoutMs: 20_000, sandbox })).output,
  };
}

async function listen(path: string): Promise<{ connections: () => number }> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count += 1;
    socket.end("docker says hi\n");
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  cleanups.push(() => server.close());
  return { connections: () => count };
}

const CONNECT = (path: string) =>
  `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${path}'); print(s.recv(100).decode().strip())" 2>&1 | tail -1`;

describe.skipIf(NO_BUBBLEWRAP !== undefined)(`the sandbox's secrets ${NO_BUBBLEWRAP ?? ""}`, () => {
  it("refuses unix sockets outside /run and /tmp (a docker socket under $HOME), unless named", async () => {
    const { home, run } = setUp("work");
    const socket = join(home, ".colima", "docker.sock");
    mkdirSync(join(home, ".colima"));
    const docker = await listen(socket);
    const output = await run(
      `${CONNECT(socket)}; python3 -c "import socket; a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(4).decode())"`,
    );
    expect(output).toContain("PermissionError");
    expect(output).not.toContain("docker says hi");
    // A program's own socket pairs still work.
    expect(output).toContain("pair\n");
    expect(docker.connections()).toBe(0);

    const named = setUp("work", { network: { allowUnixSockets: [socket] } });
    expect(await named.run(CONNECT(socket))).toContain("docker says hi");
    expect(docker.connections()).toBe(1);
  });

  it("refuses unix sockets under node's runner too (the whole sandbox filtered), its bridge to the proxy still working", async () => {
    const server = createHttpServer((_request, response) => response.end("through the bridge\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => server.close());
    const port = (server.address() as { port: number }).port;
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
      else callback(null, "127.0.0.1", 4);
    };
    const { home, run } = setUp(
      "work",
      { network: { allowedDomains: ["allowed.test"] } },
      {},
      { runner: "node", lookup, reachLoopback: true },
    );
    const socket = join(home, "docker.sock");
    const docker = await listen(socket);
    const output = await run(
      `${CONNECT(socket)}; curl -sS http://allowed.test:${port}/ & curl -sS --proxytunnel http://allowed.test:${port}/ & wait; ps -o comm= -p 2`,
    );
    expect(output).toContain("PermissionError");
    expect(docker.connections()).toBe(0);
    expect(output.match(/through the bridge/g)).toHaveLength(2);
    // The runner (pid 2, under bubblewrap's init) is node's.
    expect(output).toContain("node");
  });

  it("keeps the model's and the gateway's credentials out of commands' environments", async () => {
    const saved = { ...process.env };
    cleanups.push(() => {
      for (const name of ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "RUDDER_TOKEN"])
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
    });
    process.env.ANTHROPIC_API_KEY = "sk-ant-canary-key";
    process.env.ANTHROPIC_AUTH_TOKEN = "canary-auth-token";
    process.env.RUDDER_TOKEN = "canary-gateway-token";
    const { run, workspace } = setUp("work");
    const inside = await run("env; cat /proc/self/environ | tr '\\0' '\\n'");
    const plain = (await runCommand("env", { cwd: workspace, timeoutMs: 10_000 })).output;
    for (const output of [inside, plain]) {
      expect(output).toContain("PATH=");
      expect(output).not.toContain("canary");
    }
  });

  it("hides the gateway's data folder wherever it is, and a secret folder made during the session", async () => {
    const data = realpathSync(mkdtempSync("/var/tmp/rudder-secrets-data-"));
    cleanups.push(() => rmSync(data, { recursive: true, force: true }));
    writeFileSync(join(data, "token"), "data-folder-canary");
    const { home, run } = setUp("work", {}, { RUDDER_GATEWAY_DATA: data });
    mkdirSync(join(home, ".config"));
    const first = await run(`cat ${data}/token; ls ~/.config; echo first`);
    expect(first).toContain("first");
    expect(first).not.toContain("data-folder-canary");
    // `gh auth login` on the host while the session runs.
    mkdirSync(join(home, ".config", "gh"));
    writeFileSync(join(home, ".config", "gh", "hosts.yml"), "gh-canary");
    const after = await run(`cat ${home}/.config/gh/hosts.yml; echo after`);
    expect(after).toContain("after");
    expect(after).not.toContain("gh-canary");
  });

  it("keeps a hidden folder hidden when the workspace is inside it (~/.claude/project)", async () => {
    const { home, workspace, run } = setUp(".claude/project");
    writeFileSync(join(home, ".claude", ".credentials.json"), "claude-canary");
    writeFileSync(join(workspace, "notes.md"), "workspace file");
    const output = await run(
      `cat notes.md; cat ${home}/.claude/.credentials.json; ls -a ${home}/.claude; echo made > new.txt && cat new.txt; touch ${home}/.claude/x 2>&1`,
    );
    expect(output).toContain("workspace file");
    expect(output).toContain("made");
    expect(output).not.toContain("claude-canary");
    expect(output).toContain("Read-only file system");
  });

  it("builds a filter for the architectures rudder knows", () => {
    expect(unixSocketFilter("x64")?.length).toBeGreaterThan(0);
    expect(unixSocketFilter("arm64")?.length).toBeGreaterThan(0);
    expect(unixSocketFilter("mips")).toBeUndefined();
  });
});
