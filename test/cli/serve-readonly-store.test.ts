/**
 * A gateway.db that cannot be written (mode 0444, `rudder serve` run as an unprivileged user)
 * is a one-line refusal to start, exit 1: not a gateway that starts "healthy" and answers every
 * message with a 500. As root, the CLI runs as `nobody` (util-linux's setpriv), since root
 * writes a read-only file all the same.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { SqliteGatewayStore } from "../../src/gateway/store/sqlite/sqlite-store.js";
import { RUDDER_CLI } from "./rudder-process.js";

let root = "";

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const asRoot = process.getuid?.() === 0;

it("refuses to start, in one line, on a gateway.db it cannot write", async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-readonly-store-"));
  chmodSync(root, 0o755);
  const dataDir = join(root, "data");
  mkdirSync(dataDir, { mode: 0o755 });
  const store = new SqliteGatewayStore(join(dataDir, "gateway.db"));
  await store.insertUserMessage("c", "kept", "http");
  await store.close();
  chmodSync(join(dataDir, "gateway.db"), 0o444);
  const command = [RUDDER_CLI, "serve", "--port", "0", "--data", dataDir];
  const child: ChildProcess = asRoot
    ? spawn(
        "setpriv",
        ["--reuid=nobody", "--regid=nogroup", "--clear-groups", process.execPath, ...command],
        {
          cwd: root,
          env: { PATH: process.env.PATH, HOME: root },
          stdio: ["ignore", "pipe", "pipe"],
        },
      )
    : spawn(process.execPath, command, {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: root },
        stdio: ["ignore", "pipe", "pipe"],
      });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  expect(code).toBe(1);
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^rudder serve: cannot write the store .*gateway\.db: .*readonly/);
}, 30_000);
