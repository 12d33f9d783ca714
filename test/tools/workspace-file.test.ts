import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEditFileTool } from "../../src/tools/edit-file-tool.js";
import { createReadFileTool } from "../../src/tools/read-file-tool.js";
import { createWriteFileTool } from "../../src/tools/write-file-tool.js";
import { contextFor, makeWorkspace } from "./temp-workspace.js";

const { workspace, remove } = makeWorkspace("workspace-file");
const outside = makeWorkspace("workspace-file-outside");
afterAll(() => {
  remove();
  outside.remove();
});
const context = contextFor(workspace);
const read = createReadFileTool();
const write = createWriteFileTool();
const edit = createEditFileTool();

describe("the file tools and hard links", () => {
  const secret = join(outside.workspace, "id_ed25519");
  writeFileSync(secret, "PRIVATE KEY\n");
  linkSync(secret, join(workspace, "innocent.txt"));

  it("neither read nor write a file with another hard link, which may be outside", async () => {
    const results = [
      await read.execute({ path: "innocent.txt" }, context),
      await write.execute({ path: "innocent.txt", content: "overwritten" }, context),
      await edit.execute(
        { path: "innocent.txt", old_text: "PRIVATE", new_text: "PUBLIC" },
        context,
      ),
    ];
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(result.content).toContain("2 hard links");
      expect(result.content).not.toContain("PRIVATE KEY");
    }
    expect(readFileSync(secret, "utf8")).toBe("PRIVATE KEY\n");
  });

  it("work again on the file once it has a single link", async () => {
    writeFileSync(join(workspace, "single.txt"), "one link\n");
    expect((await read.execute({ path: "single.txt" }, context)).content).toBe("one link\n");
    const result = await write.execute({ path: "single.txt", content: "two\n" }, context);
    expect(result).toMatchObject({
      content: "Overwrote single.txt (4 bytes written).",
      isError: false,
    });
  });
});

describe("the file tools and other files that are not plain", () => {
  it("refuse a FIFO at once instead of hanging", async () => {
    execFileSync("mkfifo", [join(workspace, "pipe")]);
    const reading = await read.execute({ path: "pipe" }, context);
    expect(reading).toMatchObject({ isError: true });
    expect(reading.content).toContain("not a regular file");
    const writing = await write.execute({ path: "pipe", content: "x" }, context);
    expect(writing.content).toContain("not a regular file");
  });

  it("refuse to write through a symbolic link at the end of the path, even one inside", async () => {
    mkdirSync(join(workspace, "real"));
    writeFileSync(join(outside.workspace, "bashrc"), "original\n");
    symlinkSync(join(outside.workspace, "bashrc"), join(workspace, "real", "rc"));
    const result = await write.execute({ path: "real/rc", content: "planted" }, context);
    expect(result.isError).toBe(true);
    expect(readFileSync(join(outside.workspace, "bashrc"), "utf8")).toBe("original\n");
  });

  it("refuse a directory with a message that names it", async () => {
    const result = await write.execute({ path: "real", content: "x" }, context);
    expect(result.content).toContain("is a directory");
  });
});
