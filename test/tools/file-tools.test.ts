import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEditFileTool } from "../../src/tools/edit-file-tool.js";
import { createReadFileTool } from "../../src/tools/read-file-tool.js";
import { createWriteFileTool } from "../../src/tools/write-file-tool.js";
import { contextFor, makeWorkspace } from "./temp-workspace.js";

const { workspace, remove } = makeWorkspace("file-tools");
const outside = makeWorkspace("file-tools-outside");
afterAll(() => {
  remove();
  outside.remove();
});
const context = contextFor(workspace);
const read = createReadFileTool();
const write = createWriteFileTool();
const edit = createEditFileTool();
const unicode = "caf\u00e9 \u{1f600} \u4e2d\u6587\r\nline two\n\u2028end";

describe("write_file", () => {
  it("creates parent folders and reports bytes written", async () => {
    const result = await write.execute({ path: "a/b/c.txt", content: unicode }, context);
    expect(result.isError).toBe(false);
    expect(result.content).toContain(`${Buffer.byteLength(unicode)} bytes`);
    expect(readFileSync(join(workspace, "a/b/c.txt"), "utf8")).toBe(unicode);
  });

  it("refuses paths outside the workspace and through symlinks", async () => {
    symlinkSync(outside.workspace, join(workspace, "out-link"));
    for (const path of ["../x.txt", "out-link/x.txt", join(outside.workspace, "x.txt")]) {
      const result = await write.execute({ path, content: "x" }, context);
      expect(result.isError).toBe(true);
      expect(result.content).toContain("outside the workspace");
    }
  });
});

describe("read_file", () => {
  it("round-trips unicode exactly", async () => {
    await write.execute({ path: "u.txt", content: unicode }, context);
    expect(await read.execute({ path: "u.txt" }, context)).toMatchObject({
      content: unicode,
      isError: false,
    });
  });

  it("reads a slice with offset and limit and says how to continue", async () => {
    const lines = Array.from({ length: 10 }, (_, index) => `line ${index + 1}\n`).join("");
    writeFileSync(join(workspace, "ten.txt"), lines);
    const result = await read.execute({ path: "ten.txt", offset: 3, limit: 2 }, context);
    expect(result.content).toBe(
      "line 3\nline 4\n[Showed lines 3-4 of 10. Use offset=5 to read more.]",
    );
    const past = await read.execute({ path: "ten.txt", offset: 20 }, context);
    expect(past.content).toContain("past the end");
  });

  it("reports missing files, directories, empty and binary files", async () => {
    expect((await read.execute({ path: "missing.txt" }, context)).isError).toBe(true);
    mkdirSync(join(workspace, "folder"));
    const folder = await read.execute({ path: "folder" }, context);
    expect(folder).toMatchObject({ isError: true });
    expect(folder.content).toContain("directory");
    writeFileSync(join(workspace, "empty.txt"), "");
    expect((await read.execute({ path: "empty.txt" }, context)).content).toBe("(empty file)");
    writeFileSync(join(workspace, "binary.bin"), Buffer.from([1, 0, 2]));
    expect((await read.execute({ path: "binary.bin" }, context)).content).toContain("binary");
  });

  it("refuses a symlink leading outside", async () => {
    writeFileSync(join(outside.workspace, "secret.txt"), "secret");
    symlinkSync(join(outside.workspace, "secret.txt"), join(workspace, "secret-link"));
    const result = await read.execute({ path: "secret-link" }, context);
    expect(result.isError).toBe(true);
    expect(result.content).not.toContain("secret\n");
  });
});

describe("edit_file", () => {
  it("replaces exactly one occurrence and preserves every other byte", async () => {
    const original = Buffer.concat([
      Buffer.from(unicode, "utf8"),
      Buffer.from([0xff, 0xfe]),
      Buffer.from("\r\nunique \u00e9 marker\r\n", "utf8"),
    ]);
    writeFileSync(join(workspace, "e.txt"), original);
    const result = await edit.execute(
      { path: "e.txt", old_text: "unique \u00e9 marker", new_text: "\u{1f600} replaced" },
      context,
    );
    expect(result.isError).toBe(false);
    const expected = Buffer.concat([
      Buffer.from(unicode, "utf8"),
      Buffer.from([0xff, 0xfe]),
      Buffer.from("\r\n\u{1f600} replaced\r\n", "utf8"),
    ]);
    expect(readFileSync(join(workspace, "e.txt")).equals(expected)).toBe(true);
  });

  it("says when the text is not found", async () => {
    writeFileSync(join(workspace, "n.txt"), "alpha\n");
    const result = await edit.execute({ path: "n.txt", old_text: "beta", new_text: "x" }, context);
    expect(result.isError).toBe(true);
    expect(result.content).toContain("not found");
    expect(readFileSync(join(workspace, "n.txt"), "utf8")).toBe("alpha\n");
  });

  it("says how many times ambiguous text occurs", async () => {
    writeFileSync(join(workspace, "m.txt"), "x = 1\nx = 1\nx = 1\n");
    const result = await edit.execute({ path: "m.txt", old_text: "x = 1", new_text: "y" }, context);
    expect(result.isError).toBe(true);
    expect(result.content).toContain("occurs 3 times");
    expect(readFileSync(join(workspace, "m.txt"), "utf8")).toBe("x = 1\nx = 1\nx = 1\n");
  });

  it("reports a missing file and refuses paths outside", async () => {
    const missing = await edit.execute({ path: "nope.txt", old_text: "a", new_text: "b" }, context);
    expect(missing.isError).toBe(true);
    const outsideEdit = await edit.execute({ path: "../x", old_text: "a", new_text: "b" }, context);
    expect(outsideEdit.content).toContain("outside the workspace");
  });
});
