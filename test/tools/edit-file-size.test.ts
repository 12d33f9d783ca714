/** `edit_file` refuses a file past `read_file`'s cap before reading it, as `read_file` does. */
import { statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEditFileTool } from "../../src/tools/edit-file-tool.js";
import { MAX_FILE_BYTES } from "../../src/tools/read-file-tool.js";
import { contextFor, makeWorkspace } from "./temp-workspace.js";

const { workspace, remove } = makeWorkspace("edit-file-size");
afterAll(remove);

describe("edit_file's size cap", () => {
  it("refuses a file larger than read_file's limit, leaving it as it was", async () => {
    const path = join(workspace, "huge.log");
    writeFileSync(path, "needle\n");
    // Sparse: the size without the disk.
    truncateSync(path, MAX_FILE_BYTES + 1);
    const result = await createEditFileTool().execute(
      { path: "huge.log", old_text: "needle", new_text: "thread" },
      contextFor(workspace),
    );
    expect(result.isError).toBe(true);
    expect(result.content).toContain("too large to edit whole");
    expect(statSync(path).size).toBe(MAX_FILE_BYTES + 1);
  });
});
