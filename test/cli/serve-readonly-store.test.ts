/**
 * A gateway.db that cannot be written (mode 0400, `rudder serve` run as its unprivileged owner)
 * is a one-line refusal to start, exit 1: not a gateway that starts "healthy" and answers every
 * message with a 500. As root, the CLI runs as `nobody` (util-linux's setpriv), since root
 * writes a read-only file all the same.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { SqliteGatewayStore } from "../../src/gateway/store/sqlite/sqlite-store.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { runProcess } from "../helpers/owned-process.js";

let root = "";

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const asRoot = process.getuid?.() === 0;

it("refuses to start, in one line, on a gateway.db it cannot write", async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-readonly-store-"));
  chmodSync(root, 0o755);
  const dataDir = join(root, "data");
  mkdirSync(dataDir, { mode: 0o700 });
  const database = join(dataDir, "gateway.db");
  const store = new SqliteGatewayStore(database);
  await store.insertUserMessage("c", "kept", "http");
  await store.close();
  // Private (nothing for others to narrow) and read-only to its owner, the user that serves.
  chmodSync(database, 0o400);
  if (asRoot) {
    const nobody = Number(execFileSync("id", ["-u", "nobody"], { encoding: "utf8" }).trim());
    for (const path of [dataDir, database]) chownSync(path, nobody, nobodyGroup());
  }
  const command = [RUDDER_CLI, "serve", "--port", "0", "--data", dataDir];
  const options = { cwd: root, env: { PATH: process.env.PATH, HOME: root } };
  const { code, stderr } = asRoot
    ? await runProcess(
        "setpriv",
        [
          "--reuid=nobody",
          `--regid=${nobodyGroup()}`,
          "--clear-groups",
          process.execPath,
          ...command,
        ],
        options,
      )
    : await runProcess(process.execPath, command, options);
  expect(code).toBe(1);
  const lines = stderr.trim().split("\n");
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^rudder serve: cannot write the store .*gateway\.db: .*readonly/);
}, 30_000);

function nobodyGroup(): number {
  return Number(execFileSync("id", ["-g", "nobody"], { encoding: "utf8" }).trim());
}
