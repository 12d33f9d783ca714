import { existsSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixturePath } from "../../helpers/fixtures.js";
import { outputMatching, startProcess } from "../../helpers/owned-process.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";
import { waitFor } from "../../helpers/wait-for.js";

/** The state letter of a process (`Z` is a zombie: dead), or null when it is gone. */
function processState(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] ?? null;
  } catch {
    return null;
  }
}

function postmasterPid(dataFolder: string): number {
  return Number(readFileSync(`${dataFolder}/postmaster.pid`, "utf8").split("\n")[0]);
}

async function query(url: string, text: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

describe("the throwaway PostgreSQL cluster of the tests", () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  it("serves on a loopback port, not as root, with a database per caller", async () => {
    expect(cluster.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    const url = await cluster.createDatabase();
    const [row] = (await query(url, "SELECT current_database() AS name, current_user AS user")) as {
      name: string;
    }[];
    expect(url.endsWith(`/${row?.name}`)).toBe(true);
    const [setting] = (await query(url, "SHOW data_directory")) as { data_directory: string }[];
    const pid = postmasterPid(setting?.data_directory ?? "");
    const owner = readFileSync(`/proc/${pid}/status`, "utf8").match(/^Uid:\s+(\d+)/m)?.[1];
    expect(owner).not.toBe("0");
  });

  it("stops and starts again on the same port with its data kept", async () => {
    const url = await cluster.createDatabase("kept");
    await query(url, "CREATE TABLE notes (text text); INSERT INTO notes VALUES ('before')");
    await cluster.stop();
    await expect(query(url, "SELECT 1")).rejects.toThrow(/ECONNREFUSED/);
    await cluster.start();
    expect(await query(url, "SELECT text FROM notes")).toEqual([{ text: "before" }]);
  });

  it("leaves no server and no folder after destroy", async () => {
    const other = await startPostgresCluster();
    const [setting] = (await query(other.url, "SHOW data_directory")) as {
      data_directory: string;
    }[];
    const dataFolder = setting?.data_directory ?? "";
    const pid = postmasterPid(dataFolder);
    await other.destroy();
    expect([null, "Z"]).toContain(processState(pid));
    expect(() => readFileSync(`${dataFolder}/postmaster.pid`)).toThrow(/ENOENT/);
  });

  it("dies with its owner: a SIGKILLed test process leaves no server and no folder", async () => {
    const owner = startProcess(process.execPath, [
      "--import",
      "tsx",
      fixturePath("postgres-owner-child.ts"),
    ]);
    let started: { dataFolder: string; backendPid: number };
    try {
      const [, line] = await outputMatching(owner, /^(.*)\n/);
      started = JSON.parse(line ?? "") as typeof started;
    } catch (error) {
      owner.kill();
      throw error;
    }
    const postmaster = postmasterPid(started.dataFolder);
    expect(processState(postmaster)).not.toBeNull();
    // The owner alone, not its group: what it started must die with it by itself.
    owner.child.kill("SIGKILL");
    await waitFor(
      () =>
        [null, "Z"].includes(processState(postmaster)) &&
        [null, "Z"].includes(processState(started.backendPid)) &&
        !existsSync(dirname(started.dataFolder)),
      "the server, its backend and its folder to be gone",
      30_000,
    );
  });
});
