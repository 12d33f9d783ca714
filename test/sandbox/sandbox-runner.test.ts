/**
 * The session's one long-lived sandbox, with the real bubblewrap: each
 * command still gets its own process group inside, killed on timeout, on
 * abort and at its end; its cwd and environment are its own; a sandbox
 * that no longer fits, or that broke, is replaced. All of it with each
 * runner: perl's (where perl is installed, as here) and node's (without).
 */
import { mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findExecutable } from "../../src/sandbox/bubblewrap-probe.js";
import { runCommand } from "../../src/tools/run-command.js";
import { processesMatching } from "../helpers/process-scan.js";
import { waitFor } from "../helpers/wait-for.js";
import { NO_BUBBLEWRAP, type SandboxFixture, sandboxFixture } from "./sandbox-helpers.js";

const RUNNERS = (["perl", "node"] as const).filter(
  (runner) => runner === "node" || findExecutable(runner, process.env.PATH) !== undefined,
);

let fixture: SandboxFixture | undefined;
afterEach(() => {
  fixture?.cleanup();
  fixture = undefined;
});

describe.skipIf(NO_BUBBLEWRAP !== undefined).each(RUNNERS)(
  `the session's sandbox, %s runner ${NO_BUBBLEWRAP ?? ""}`,
  (runner) => {
    function setUp(): SandboxFixture {
      fixture = sandboxFixture({}, { runner });
      return fixture;
    }

    it("runs every command in one sandbox, each in its own process group", async () => {
      const { run } = setUp();
      const first = await run("echo $$; ps -o pgid= -p $$; readlink /proc/self/ns/pid");
      const second = await run("echo $$; ps -o pgid= -p $$; readlink /proc/self/ns/pid");
      expect(first.sandboxed && second.sandboxed).toBe(true);
      const [firstPid, firstGroup, firstNamespace] = first.output.trim().split(/\s+/);
      const [secondPid, secondGroup, secondNamespace] = second.output.trim().split(/\s+/);
      expect(firstGroup).toBe(firstPid);
      expect(secondGroup).toBe(secondPid);
      expect(secondPid).not.toBe(firstPid);
      // One PID namespace, so one sandbox, for both; not the host's.
      expect(secondNamespace).toBe(firstNamespace);
      expect(firstNamespace).not.toBe(readlinkSync("/proc/self/ns/pid"));
    });

    it("kills a command's whole tree on timeout, on abort and when it returns", async () => {
      const { run, workspace, sandbox } = setUp();
      const timedOut = await run("sleep 97.1 & sleep 97.2", 1500);
      expect(timedOut.timedOut).toBe(true);
      const controller = new AbortController();
      const aborted = runCommand("sleep 97.3 & sleep 97.4", {
        cwd: workspace,
        timeoutMs: 60_000,
        sandbox,
        signal: controller.signal,
      });
      await waitFor(() => processesMatching("sleep 97.4").length > 0, "the sleep to start", 15_000);
      controller.abort();
      expect((await aborted).aborted).toBe(true);
      const returned = await run("(sleep 97.5 &) ; nohup sleep 97.6 >/dev/null 2>&1 & echo back");
      expect(returned.output).toContain("back");
      await waitFor(
        () =>
          ["97.1", "97.2", "97.3", "97.4", "97.5", "97.6"].every(
            (seconds) => processesMatching(`sleep ${seconds}`).length === 0,
          ),
        "every sleep to be gone",
        10_000,
      );
      // The sandbox itself lives on for the next command.
      expect((await run("echo still")).output).toBe("still\n");
    });

    it("starts each command in its cwd with rudder's environment of the moment, minus credentials", async () => {
      const { run, workspace, sandbox } = setUp();
      mkdirSync(join(workspace, "sub"));
      await run("true");
      process.env.RUDDER_SANDBOX_TEST_VALUE = "late";
      process.env.RUDDER_TOKEN = "secret-token";
      try {
        const result = await runCommand(
          'pwd; echo "$RUDDER_SANDBOX_TEST_VALUE" "$(printenv RUDDER_TOKEN || echo none)"',
          {
            cwd: join(workspace, "sub"),
            timeoutMs: 20_000,
            sandbox,
          },
        );
        expect(result.output).toBe(`${realpathSync(join(workspace, "sub"))}\nlate none\n`);
        // Nor can a command read it from the runner's environment.
        const runner = await run(
          "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c RUDDER_TOKEN",
        );
        expect(runner.output.trim()).toBe("0");
      } finally {
        delete process.env.RUDDER_SANDBOX_TEST_VALUE;
        delete process.env.RUDDER_TOKEN;
      }
    });

    it("carries output byte for byte: large, multi-byte, stdout and stderr each whole", async () => {
      const { workspace, sandbox } = setUp();
      const command = `python3 -c "
import sys
for _ in range(50):
    sys.stdout.write('é' * 5001 + '\\n'); sys.stdout.flush()
    sys.stderr.write('ü' * 3001 + '\\n'); sys.stderr.flush()
"`;
      const result = await runCommand(command, {
        cwd: workspace,
        timeoutMs: 30_000,
        sandbox,
        maxOutputChars: 1_000_000,
      });
      expect(result.exitCode, result.output.slice(0, 500)).toBe(0);
      const lines = result.output.trim().split("\n");
      expect(lines.filter((line) => line === "é".repeat(5001))).toHaveLength(50);
      expect(lines.filter((line) => line === "ü".repeat(3001))).toHaveLength(50);
      expect(lines).toHaveLength(100);
    });

    it("replaces a sandbox that broke, and one whose confinement no longer fits", async () => {
      const { run, workspace } = setUp();
      // A command that kills everything in its sandbox, the runner included.
      const killed = await run("kill -KILL -1; sleep 5");
      expect(killed.exitCode).not.toBe(0);
      expect((await run("echo again")).output).toBe("again\n");
      await run("git init -q");
      // .git/config did not exist when this sandbox started: the next command gets a new one.
      const written = await run("git config core.hooksPath /tmp/hooks; echo status $?");
      expect(written.output).toContain("could not write config file");
      expect(readFileSync(join(workspace, ".git", "config"), "utf8")).not.toContain("hooksPath");
    });

    it("warm() starts the sandbox before any command, once, and the first command runs in it", async () => {
      const { run, sandbox, workspace } = setUp();
      const ownNamespace = readlinkSync("/proc/self/ns/pid");
      // The PID namespaces of the sandboxes for this workspace (its bubblewrap names it).
      const namespaces = () =>
        new Set(
          processesMatching(`--chdir ${workspace}`)
            .map((pid) => {
              try {
                return readlinkSync(`/proc/${pid}/ns/pid`);
              } catch {
                return ownNamespace;
              }
            })
            .filter((namespace) => namespace !== ownNamespace),
        );
      expect(namespaces().size).toBe(0);
      sandbox.warm();
      sandbox.warm();
      await waitFor(() => namespaces().size > 0, "a namespace", 15_000);
      expect(namespaces().size).toBe(1);
      const result = await run("readlink /proc/self/ns/pid");
      expect(result.sandboxed).toBe(true);
      expect(namespaces()).toEqual(new Set([result.output.trim()]));
    });

    it("starts with NODE_OPTIONS requiring a file the sandbox hides, and commands still see it", async () => {
      const { run, root } = setUp();
      // Under the host's /tmp, which the sandbox replaces with its private one.
      const preload = join(root, "preload.cjs");
      writeFileSync(preload, "");
      const before = process.env.NODE_OPTIONS;
      process.env.NODE_OPTIONS = `--require ${preload}`;
      try {
        const result = await run('echo "options: $NODE_OPTIONS"');
        expect(result.sandboxed).toBe(true);
        expect(result.output).toBe(`options: --require ${preload}\n`);
      } finally {
        if (before === undefined) delete process.env.NODE_OPTIONS;
        else process.env.NODE_OPTIONS = before;
      }
    });

    it("reports a shell killed by a signal by the signal's name, and a missing cwd as an error", async () => {
      const { run, sandbox, workspace } = setUp();
      const killed = await run("kill -SEGV $$");
      expect(killed.sandboxed).toBe(true);
      expect([killed.exitCode, killed.signal]).toEqual([null, "SIGSEGV"]);
      const exited = await run("exit 139");
      expect([exited.exitCode, exited.signal]).toEqual([139, null]);
      const missing = await runCommand("echo never", {
        cwd: join(workspace, "missing"),
        timeoutMs: 20_000,
        sandbox,
      });
      expect(missing.output).not.toContain("never");
      expect(missing.exitCode).not.toBe(0);
    });

    it("warm() starts nothing when the sandbox is off", async () => {
      fixture = sandboxFixture({ enabled: false }, { runner });
      const { sandbox, workspace } = fixture;
      sandbox.warm();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(processesMatching(`--chdir ${workspace}`)).toEqual([]);
    });
  },
);
