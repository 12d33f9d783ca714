/**
 * The bash tool's sandbox, with the real bubblewrap: what a command inside
 * can and cannot reach.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer, type LookupFunction, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BackgroundManager } from "../../src/background/background-manager.js";
import { createBashTool } from "../../src/tools/bash-tool.js";
import { NO_BUBBLEWRAP, type SandboxFixture, sandboxFixture } from "./sandbox-helpers.js";

let fixture: SandboxFixture | undefined;
afterEach(() => {
  fixture?.cleanup();
  fixture = undefined;
});

function setUp(...args: Parameters<typeof sandboxFixture>): SandboxFixture {
  fixture = sandboxFixture(...args);
  return fixture;
}

describe.skipIf(NO_BUBBLEWRAP !== undefined)(`the sandbox ${NO_BUBBLEWRAP ?? ""}`, () => {
  it("lets the workspace be written and nothing outside it", async () => {
    const { run, workspace, outside } = setUp();
    const result = await run(
      // Root inside has no capabilities: the read-only root cannot be remounted writable.
      `echo inside > made.txt && echo escaped > ${outside}/out.txt; echo "status $?"; mount -o remount,rw / 2>/dev/null; touch /etc/rudder-test; touch $HOME/x`,
    );
    expect(result.sandboxed).toBe(true);
    expect(readFileSync(join(workspace, "made.txt"), "utf8")).toBe("inside\n");
    expect(result.output).toContain("Read-only file system");
    expect(result.output).toContain("status 1");
    expect(existsSync(join(outside, "out.txt"))).toBe(false);
    expect(existsSync("/etc/rudder-test")).toBe(false);
  });

  it("gives a private /tmp (TMPDIR) that lasts across commands and never reaches the host's", async () => {
    const { run, root } = setUp();
    const hostPath = join(root, "from-inside.txt");
    const first = await run(
      `echo kept > "$TMPDIR/note" && echo "$TMPDIR" && echo hidden > ${hostPath} && ls /tmp`,
    );
    expect(first.exitCode).toBe(0);
    expect(first.output.split("\n")[0]).toBe("/tmp");
    const second = await run(`cat /tmp/note`);
    expect(second.output).toBe("kept\n");
    // The host's /tmp (where the test's root is) is not the sandbox's.
    expect(existsSync(hostPath)).toBe(false);
  });

  it("hides secrets and rudder's data folder entirely", async () => {
    const { run, home } = setUp();
    for (const [path, text] of [
      [".ssh/id_ed25519", "PRIVATE KEY"],
      [".aws/credentials", "aws secret"],
      [".config/gh/hosts.yml", "gh token"],
      [".rudder/token", "gateway token"],
      [".rudder/sessions/s.jsonl", "transcript"],
      [".claude/.credentials.json", "claude"],
      [".netrc", "machine x password y"],
      [".git-credentials", "https://u:p@host"],
    ] as const) {
      mkdirSync(join(home, path, ".."), { recursive: true });
      writeFileSync(join(home, path), text);
    }
    writeFileSync(join(home, "notes.txt"), "ordinary");
    const result = await run(
      `export HOME=${home}; cat ~/notes.txt; for f in .ssh/id_ed25519 .aws/credentials .config/gh/hosts.yml .rudder/token .rudder/sessions/s.jsonl .claude/.credentials.json .netrc .git-credentials; do cat ~/$f; done; echo "found=$(find ~/.ssh ~/.rudder ~/.aws -mindepth 1 2>/dev/null | wc -l)"; echo x > ~/.ssh/planted`,
    );
    expect(result.output).toContain("ordinary");
    for (const secret of ["PRIVATE KEY", "aws secret", "gh token", "gateway token", "transcript"]) {
      expect(result.output).not.toContain(secret);
    }
    expect(result.output).not.toContain("password");
    expect(result.output).not.toContain("u:p@host");
    // Named, in one write: the output interleaves stdout with the errors' stderr, chunk by
    // chunk, so a bare "0" once landed inside an error line.
    expect(result.output).toMatch(/found=0\n/);
    expect(existsSync(join(home, ".ssh", "planted"))).toBe(false);
  });

  it("has no network: a connect to a loopback server outside fails", async () => {
    const { run } = setUp();
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections += 1;
      socket.end("hello\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const result = await run(
        `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected; node -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => console.log('node connected')).on('error', (e) => console.log(e.code))"`,
      );
      expect(result.output).not.toContain("connected\n");
      expect(result.output).toContain("ECONNREFUSED");
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  });

  it("runs the workspace's tools: git, node, python3, npm", async () => {
    const { run, workspace } = setUp();
    const result = await run(
      [
        "git init -q && git -c user.email=a@b -c user.name=t commit -q --allow-empty -m first && git log --oneline | wc -l",
        `node -e "require('fs').writeFileSync('n.txt', String(6 * 7))"`,
        `python3 -c "open('p.txt', 'w').write('py')"`,
        "npm init -y >/dev/null && npm pkg get name",
      ].join(" && "),
      60_000,
    );
    expect(result.exitCode, result.output).toBe(0);
    expect(readFileSync(join(workspace, "n.txt"), "utf8")).toBe("42");
    expect(readFileSync(join(workspace, "p.txt"), "utf8")).toBe("py");
    expect(result.output).toContain('"work"');
    expect(existsSync(join(workspace, ".git", "HEAD"))).toBe(true);
  });

  it("keeps the files that configure hooks and MCP servers read-only, existing or not", async () => {
    const { run, workspace, sandbox } = setUp();
    await run("git init -q");
    const settings = JSON.stringify({
      hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "touch /tmp/pwned" }] }] },
    });
    const result = await run(
      [
        `mkdir -p .claude && echo '${settings}' > .claude/settings.json`,
        `echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json`,
        "mkdir -p .rudder && echo '{}' > .rudder/settings.json",
        "echo 'touch /tmp/pwned' > .git/hooks/pre-commit",
        "git config core.hooksPath /tmp/hooks",
        "rm -rf .git/hooks",
        "echo done",
      ].join("; "),
    );
    expect(result.output).toContain("done");
    expect(result.output).toContain("Read-only file system");
    expect(existsSync(join(workspace, ".claude", "settings.json"))).toBe(false);
    expect(existsSync(join(workspace, ".rudder", "settings.json"))).toBe(false);
    expect(existsSync(join(workspace, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(readFileSync(join(workspace, ".git", "config"), "utf8")).not.toContain("hooksPath");
    expect(existsSync(join(workspace, ".git", "hooks"))).toBe(true);
    // The stand-ins for what did not exist last as long as the session's sandbox, and no longer.
    expect(readdirSync(workspace).sort()).toEqual([".claude", ".git", ".mcp.json", ".rudder"]);
    sandbox.close();
    expect(readdirSync(workspace).sort()).toEqual([".git"]);
  });

  it("tells the model what the sandbox allows when it stopped a command", async () => {
    const { sandbox, workspace, outside } = setUp();
    const bash = createBashTool({ sandbox });
    const controller = new AbortController();
    const written = await bash.execute(
      { command: `echo x > ${outside}/y` },
      { workspace, signal: controller.signal },
    );
    expect(written.isError).toBe(true);
    expect(written.content).toContain("Read-only file system");
    expect(written.content).toContain(
      `[sandbox] the sandbox allows writes only in the workspace (${workspace}) and $TMPDIR (/tmp)`,
    );
    const connected = await bash.execute(
      { command: "curl -sS http://127.0.0.1:9/ || exec 3<>/dev/tcp/127.0.0.1/9" },
      { workspace, signal: controller.signal },
    );
    expect(connected.content).toContain("[sandbox] the sandbox has no network");
    const ordinary = await bash.execute(
      { command: "exit 3" },
      { workspace, signal: controller.signal },
    );
    expect(ordinary.content).not.toContain("[sandbox]");
  });

  it("confines background tasks too", async () => {
    const { sandbox, workspace, outside } = setUp();
    const background = new BackgroundManager({ workspace, sandbox });
    const ended = new Promise<void>((resolve) => background.onTaskEnd(() => resolve()));
    background.start(
      `echo bg > bg.txt; echo escaped > ${outside}/bg.txt; echo "procs=$(ls /proc | grep -c '^[0-9]')"`,
    );
    await ended;
    const [task] = background.collectFinished();
    expect(readFileSync(join(workspace, "bg.txt"), "utf8")).toBe("bg\n");
    expect(task?.output).toContain("Read-only file system");
    expect(existsSync(join(outside, "bg.txt"))).toBe(false);
    // Its own PID namespace: only the sandbox's init and runner, the shell, ls and grep are there.
    // The count is printed as procs=N in one write: the merged output interleaves stdout with the
    // error's stderr chunk by chunk, so its last line need not be the bare count.
    const procs = /procs=(\d+)\n/.exec(task?.output ?? "");
    expect(procs, task?.output).not.toBeNull();
    expect(Number(procs?.[1])).toBeLessThan(8);
  });

  it("runs excludedCommands outside the sandbox, and says which way each went", async () => {
    const { sandbox, run, outside } = setUp({ excludedCommands: ["touch"] });
    expect(sandbox.confines(`touch ${outside}/plain`)).toBe(false);
    expect(sandbox.confines("echo hi")).toBe(true);
    const plain = await run(`touch ${outside}/plain`);
    expect(plain.sandboxed).toBe(false);
    expect(existsSync(join(outside, "plain"))).toBe(true);
  });
});

describe.skipIf(NO_BUBBLEWRAP !== undefined)(
  `the sandbox's domain allow-list ${NO_BUBBLEWRAP ?? ""}`,
  () => {
    it("lets an allowed host through its proxy (HTTP and CONNECT) and refuses another", async () => {
      const requests: string[] = [];
      const server = createHttpServer((request, response) => {
        requests.push(`${request.headers.host} ${request.url}`);
        response.end("hello from the allowed host\n");
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const port = (server.address() as { port: number }).port;
      // Test names, resolved to the loopback server here and nowhere else.
      const lookup: LookupFunction = (hostname, options, callback) => {
        if (hostname.endsWith(".test")) {
          if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
          else callback(null, "127.0.0.1", 4);
        } else
          callback(
            Object.assign(new Error(`no such host ${hostname}`), { code: "ENOTFOUND" }),
            "",
            4,
          );
      };
      const { run, sandbox } = setUp(
        {
          network: {
            allowedDomains: ["allowed.test", "*.api.test"],
            deniedDomains: ["bad.api.test"],
          },
        },
        { lookup, reachLoopback: true },
      );
      try {
        const result = await run(
          [
            `curl -sS http://allowed.test:${port}/plain`,
            `curl -sS --proxytunnel http://v1.api.test:${port}/tunnel`,
            `curl -sS http://other.test:${port}/refused; echo " status $?"`,
            `curl -sS --proxytunnel http://bad.api.test:${port}/denied 2>&1; echo " status $?"`,
            `exec 3<>/dev/tcp/127.0.0.1/${port} 2>/dev/null && echo direct || echo "no direct route"`,
          ].join("; "),
        );
        expect(result.output.match(/hello from the allowed host/g)).toHaveLength(2);
        expect(result.output).toContain(
          "rudder sandbox: other.test is not in sandbox.network.allowedDomains",
        );
        expect(result.output).toContain("CONNECT tunnel failed, response 403");
        expect(result.output).toContain("no direct route");
        expect(requests).toEqual([`allowed.test:${port} /plain`, `v1.api.test:${port} /tunnel`]);
        expect(sandbox.confines("curl x")).toBe(true);
      } finally {
        server.close();
      }
    });

    it("never connects to loopback or link-local addresses, whatever an allowed name resolves to", async () => {
      const server = createHttpServer((_request, response) => response.end("reached\n"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const port = (server.address() as { port: number }).port;
      // An allowed name whose DNS answers with the host's loopback (a rebinding DNS).
      const lookup: LookupFunction = (_hostname, options, callback) => {
        if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
        else callback(null, "127.0.0.1", 4);
      };
      const { run } = setUp(
        { network: { allowedDomains: ["rebound.test", "169.254.169.254"] } },
        { lookup },
      );
      try {
        const result = await run(
          [
            `curl -sS http://rebound.test:${port}/`,
            `curl -sS --proxytunnel http://rebound.test:${port}/ 2>&1`,
            "curl -sS http://169.254.169.254/latest/meta-data/",
          ].join("; "),
        );
        expect(result.output).not.toContain("reached");
        expect(result.output).toContain(
          "rudder sandbox: rebound.test resolves to 127.0.0.1, a loopback address, which the sandbox never reaches",
        );
        expect(result.output).toContain("CONNECT tunnel failed, response 403");
        expect(result.output).toContain("169.254.169.254 is a link-local address");
      } finally {
        server.close();
      }
    });
  },
);
