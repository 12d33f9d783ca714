/**
 * The gateway's data folder is private and remembers what it must: folder 0700, token and
 * database 0600 (older, wider ones narrowed with a line saying so), page-link codes traded once
 * across a restart, and its path named to the agents so their sandbox hides it.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processOptions } from "../../../src/gateway/gateway-options.js";
import { loadOrCreateToken } from "../../../src/gateway/http/auth-token.js";
import { LinkCodes } from "../../../src/gateway/http/link-codes.js";
import { makeDataFolderPrivate } from "../../../src/gateway/store/private-data-folder.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";

let root: string | undefined;
afterEach(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function folder(): string {
  root = mkdtempSync(join(tmpdir(), "rudder-data-folder-test-"));
  return root;
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe("the gateway's data folder", () => {
  it("is made 0700 with a 0600 token and database", async () => {
    const data = join(folder(), "data");
    const lines: string[] = [];
    makeDataFolderPrivate(data, (line) => lines.push(line));
    loadOrCreateToken(data);
    const store = new SqliteGatewayStore(join(data, "gateway.db"));
    await store.close();
    expect(mode(data)).toBe(0o700);
    expect(mode(join(data, "token"))).toBe(0o600);
    expect(mode(join(data, "gateway.db"))).toBe(0o600);
    expect(lines).toEqual([]);
  });

  it("narrows an older, wider one and says so", () => {
    const data = join(folder(), "data");
    mkdirSync(data, { mode: 0o755 });
    chmodSync(data, 0o755);
    for (const name of ["token", "gateway.db"]) {
      writeFileSync(join(data, name), "x");
      chmodSync(join(data, name), 0o644);
    }
    const lines: string[] = [];
    makeDataFolderPrivate(data, (line) => lines.push(line));
    expect(mode(data)).toBe(0o700);
    expect(mode(join(data, "token"))).toBe(0o600);
    expect(mode(join(data, "gateway.db"))).toBe(0o600);
    expect(lines).toEqual([
      `rudder: the data folder ${data} was open to other users (mode 755); it is now 700`,
      `rudder: the file ${join(data, "token")} was open to other users (mode 644); it is now 600`,
      `rudder: the file ${join(data, "gateway.db")} was open to other users (mode 644); it is now 600`,
    ]);
  });

  it("trades a page-link code once, across a restart", async () => {
    const path = join(folder(), "gateway.db");
    const first = new SqliteGatewayStore(path);
    const codes = new LinkCodes("the-token", { spend: (n, e) => first.spendLinkCode(n, e) });
    const { code } = codes.issue();
    expect(await codes.redeem(code)).toBe(true);
    expect(await codes.redeem(code)).toBe(false);
    await first.close();
    const second = new SqliteGatewayStore(path);
    const again = new LinkCodes("the-token", { spend: (n, e) => second.spendLinkCode(n, e) });
    expect(await again.redeem(code)).toBe(false);
    expect(await again.redeem(again.issue().code)).toBe(true);
    await second.close();
  });

  it("is named to the agents, whose sandbox hides it", () => {
    const options = processOptions({ claudeBin: "rudder" }, "/srv/rudder-data");
    expect(options.env?.RUDDER_GATEWAY_DATA).toBe("/srv/rudder-data");
  });
});
