/**
 * Files an agent sent go to the chat as they were when the turn settled: `SentFiles` keeps a
 * copy of each in the outbox folder (its own, named by its SHA-256 and a random part), so a file the agent deletes or
 * overwrites before the send still goes whole; the copy is deleted when released; without it,
 * the workspace's file is sent only while its hash matches ("changed after the agent sent it").
 */
import { existsSync, mkdirSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayEvent } from "../../../src/gateway/events.js";
import { SentFileCopies } from "../../../src/gateway/media/sent-file-copies.js";
import { SentFiles } from "../../../src/gateway/media/sent-files.js";
import { type TempFolder, tempFolder } from "../../helpers/temp-folders.js";

let folder: TempFolder;
let workspace: string;
let outbox: string;
let files: SentFiles;

beforeAll(() => {
  folder = tempFolder("rudder-sent-copies-");
  workspace = join(folder.path, "workspace");
  outbox = join(folder.path, "data", "outbox");
  mkdirSync(workspace);
  files = new SentFiles({
    workspaceFor: async () => workspace,
    maxBytes: 1024 * 1024,
    copies: new SentFileCopies(outbox),
  });
});

afterAll(() => folder.remove());

/** The agent sends `path` in a turn of channel c1, and the turn settles. */
async function sent(path: string) {
  const id = `tool-${path}`;
  const event = (fields: object) => ({ channelId: "c1", toolUseId: id, ...fields }) as GatewayEvent;
  files.record(event({ type: "tool_start", name: "send_file", input: { path } }));
  files.record(event({ type: "tool_end", name: "send_file", isError: false, content: "ok" }));
  const [file] = await files.take("c1");
  if (!file) throw new Error("the file was not kept");
  return file;
}

describe("a sent file's copy", () => {
  it("sends the bytes the agent sent though the file was deleted since", async () => {
    writeFileSync(join(workspace, "gone.txt"), "first draft");
    const file = await sent("gone.txt");
    expect(file).toMatchObject({ path: "gone.txt", size: 11, sha256: expect.any(String) });
    expect(file.copy?.startsWith(`${file.sha256}.`)).toBe(true);
    unlinkSync(join(workspace, "gone.txt"));
    expect((await files.read("c1", file)).toString()).toBe("first draft");
    await files.release(file);
    expect(readdirSync(outbox).filter((name) => !name.startsWith("."))).toEqual([]);
    await expect(files.read("c1", file)).rejects.toThrow(/gone\.txt/);
  });

  it("sends the bytes the agent sent though the file was overwritten since, and refuses the new ones once the copy is gone", async () => {
    writeFileSync(join(workspace, "chart.csv"), "a,b\n1,2\n");
    const file = await sent("chart.csv");
    writeFileSync(join(workspace, "chart.csv"), "a,b\n9,9\n");
    expect((await files.read("c1", file)).toString()).toBe("a,b\n1,2\n");
    await files.release(file);
    expect(existsSync(join(outbox, file.copy ?? ""))).toBe(false);
    await expect(files.read("c1", file)).rejects.toThrow(
      "chart.csv was changed after the agent sent it.",
    );
    // Unchanged, the workspace's file does without its copy.
    writeFileSync(join(workspace, "chart.csv"), "a,b\n1,2\n");
    expect((await files.read("c1", file)).toString()).toBe("a,b\n1,2\n");
    rmSync(join(workspace, "chart.csv"));
  });

  it("keeps a copy for each of two replies sending the same bytes: releasing one leaves the other", async () => {
    writeFileSync(join(workspace, "same.txt"), "twice sent");
    const first = await sent("same.txt");
    const second = await sent("same.txt");
    expect(second.sha256).toBe(first.sha256);
    expect(second.copy).not.toBe(first.copy);
    await files.release(first);
    writeFileSync(join(workspace, "same.txt"), "changed since");
    expect((await files.read("c1", second)).toString()).toBe("twice sent");
    await files.release(second);
    expect(readdirSync(outbox).filter((name) => !name.startsWith("."))).toEqual([]);
    rmSync(join(workspace, "same.txt"));
  });

  it("reads no copy by a name that is not one (a path, `..`)", async () => {
    const copies = new SentFileCopies(outbox);
    expect(await copies.read("../outbox")).toBeUndefined();
    expect(await copies.read(`${"0".repeat(64)}/../x`)).toBeUndefined();
    await copies.drop("..");
    expect(existsSync(outbox)).toBe(true);
  });
});
