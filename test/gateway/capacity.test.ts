/**
 * Capacity per machine: `GET /api/runners` gives each live agent's memory (the RSS of its process
 * tree), and the memory floor (`--min-free-memory`), read from a fake meminfo file rather than
 * the machine's memory, stops the least recently used idle agent when memory is short and makes
 * a new turn wait, with a log line saying why, until memory is back.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerInfo } from "../../src/gateway/agents/agent-process.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

const GIB = 1024 ** 3;
const folder = mkdtempSync(join(tmpdir(), "rudder-capacity-"));
const meminfoFile = join(folder, "meminfo");
const setAvailable = (bytes: number) =>
  writeFileSync(
    meminfoFile,
    `MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:   ${bytes / 1024} kB\n`,
  );

let gateway: TestGateway;
const lines: string[] = [];

beforeAll(async () => {
  setAvailable(8 * GIB);
  gateway = await startTestGateway({
    prefix: "capacity",
    maxLive: 4,
    logger: (line) => lines.push(line),
    memoryFloor: { minFreeBytes: 2 * GIB, meminfoFile, checkEveryMs: 50 },
  });
});
afterAll(async () => {
  await gateway.cleanup();
  rmSync(folder, { recursive: true, force: true });
});

const runners = async () =>
  (await gateway.api<{ runners: RunnerInfo[] }>("GET", "/api/runners")).body.runners;

async function say(channelId: string, text: string): Promise<string> {
  const { body } = await gateway.api<{ disposition: string }>(
    "POST",
    `/api/channels/${channelId}/messages`,
    { text },
  );
  return body.disposition;
}

function answered(channelId: string, count = 1): Promise<unknown> {
  return waitFor(async () => {
    const messages = await gateway.messages(channelId);
    return messages.filter((message) => message.role === "assistant").length >= count;
  }, `${count} answers in ${channelId}`);
}

describe("capacity per machine", () => {
  it("lists each live agent's memory: the RSS of its process tree", async () => {
    await say("older", "hello");
    await answered("older");
    await say("newer", "hello");
    await answered("newer");
    const live = await runners();
    expect(live.map((runner) => runner.channelId).sort()).toEqual(["newer", "older"]);
    for (const runner of live) {
      // A node process (the fake agent CLI): megabytes, not bytes, and not gigabytes.
      expect(runner.rssBytes).toBeGreaterThan(5 * 1024 * 1024);
      expect(runner.rssBytes).toBeLessThan(GIB);
    }
  });

  it("short of memory, stops the least recently used idle agent first, and new turns wait", async () => {
    setAvailable(1 * GIB);
    const stopped = await waitFor(
      () => lines.find((line) => line.includes("stopping the idle agent")),
      "an idle agent stopped for memory",
    );
    expect(stopped).toContain("memory is short: 1 GiB available, below the floor of 2 GiB");
    expect(stopped).toContain("channel older (least recently used)");
    expect(await say("third", "hello")).toBe("waiting");
    expect(lines.find((line) => line.includes("channel third waits"))).toContain("memory is short");
    // Memory back: the waiting message is answered.
    setAvailable(8 * GIB);
    await answered("third");
  });
});
