/**
 * A gateway.db that cannot be written (mode 0400, `rudder serve` run by its owner) is a one-line
 * refusal to start, exit 1: not a gateway that starts "healthy" and answers every message with
 * a 500. As root, the CLI runs without the capabilities that let root write (and read) any file
 * whatever its mode (util-linux's setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), and
 * not as another user: a checkout in a private folder (a fresh clone under `mktemp -d`, mode 0700)
 * is out of another user's reach, and Node's "Cannot find module" for the CLI itself, 14 lines,
 * was what one fresh-clone run saw.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
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
  const dataDir = join(root, "data");
  mkdirSync(dataDir, { mode: 0o700 });
  const database = join(dataDir, "gateway.db");
  const store = new SqliteGatewayStore(database);
  await store.insertUserMessage("c", "kept", "http");
  await store.close();
  // Private (nothing for others to narrow) and read-only to its owner, the user that serves.
  chmodSync(database, 0o400);
  const command = [RUDDER_CLI, "serve", "--port", "0", "--data", dataDir];
  const options = { cwd: root, env: { PATH: process.env.PATH, HOME: root } };
  const withoutOverride = "-dac_override,-dac_read_search";
  const { code, stderr } = asRoot
    ? await runProcess(
        "setpriv",
        [
          `--inh-caps=${withoutOverride}`,
          `--bounding-set=${withoutOverride}`,
          process.execPath,
          ...command,
        ],
        options,
      )
    : await runProcess(process.execPath, command, options);
  expect(code).toBe(1);
  const lines = stderr.trim().split("\n");
  expect(lines, stderr).toHaveLength(1);
  // The reason after the path (the folder's own name holds "readonly"): the file cannot be
  // opened for writing, or SQLite found it read-only.
  expect(lines[0]).toMatch(
    /^rudder serve: cannot write the store \S*gateway\.db: (EACCES: permission denied|attempt to write a readonly database)/,
  );
}, 30_000);
