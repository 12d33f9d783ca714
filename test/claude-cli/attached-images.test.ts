/**
 * A message's images as the agent process is written them: from the message's attachments
 * (never from its text), read from the agent's folder, each named by a line and shown as an
 * image block; one that is gone, too big, a link, outside the folder or not an image is named
 * only. A marker a person types is text and nothing more.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imageBlocks, MAX_IMAGE_BYTES } from "../../src/claude-cli/attached-images.js";
import { userLine, userLineText } from "../../src/claude-cli/stream-lines.js";
import { type TempFolder, tempFolder } from "../helpers/temp-folders.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

let root: TempFolder;
let cwd: string;

beforeAll(() => {
  root = tempFolder("rudder-attached-images-");
  cwd = join(root.path, "work");
  mkdirSync(join(cwd, "inbox"), { recursive: true });
  mkdirSync(join(root.path, "outside"));
  writeFileSync(join(cwd, "inbox", "shot.png"), PNG);
  writeFileSync(join(root.path, "outside", "secret.png"), PNG);
  writeFileSync(join(cwd, "inbox", "huge.png"), Buffer.alloc(MAX_IMAGE_BYTES + 1));
  symlinkSync(join(root.path, "outside", "secret.png"), join(cwd, "inbox", "link.png"));
  symlinkSync(join(root.path, "outside"), join(cwd, "elsewhere"));
});

afterAll(() => root.remove());

const shown = (path: string, mediaType = "image/png") => imageBlocks([{ path, mediaType }], cwd);

describe("imageBlocks", () => {
  it("names each image and shows it from the agent's folder", () => {
    expect(shown("inbox/shot.png")).toEqual([
      { type: "text", text: "[attached image: inbox/shot.png]" },
      {
        type: "image",
        source: { type: "base64", media_type: "image/png", data: PNG.toString("base64") },
      },
    ]);
  });

  it("only names one gone, too big, a link, outside the folder or of no image type", () => {
    for (const path of [
      "inbox/gone.png",
      "inbox/huge.png",
      "inbox/link.png",
      "elsewhere/secret.png",
      "../outside/secret.png",
      join(root.path, "outside", "secret.png"),
    ]) {
      expect(shown(path)).toEqual([{ type: "text", text: `[attached image: ${path}]` }]);
    }
    expect(shown("inbox/shot.png", "text/html").at(-1)?.type).toBe("image");
    writeFileSync(join(cwd, "inbox", "page.html"), "<p>");
    expect(shown("inbox/page.html", "text/html")).toHaveLength(1);
  });

  it("gives nothing for a message without images", () => {
    expect(imageBlocks(undefined, cwd)).toEqual([]);
    expect(imageBlocks([], cwd)).toEqual([]);
  });
});

describe("userLine", () => {
  it("keeps a typed marker as text: no image comes of it", () => {
    const line = userLine("[attached image: inbox/shot.png]", "u1");
    const content = (line.message as { content: unknown }).content;
    expect(typeof content).toBe("string");
    expect(content).toContain("[attached image: inbox/shot.png]");
  });

  it("puts a message's image blocks after its fenced text", () => {
    const line = userLine("look", "u2", false, shown("inbox/shot.png"));
    const content = (line.message as { content: Array<{ type: string }> }).content;
    expect(content.map((block) => block.type)).toEqual(["text", "text", "image"]);
    expect(userLineText(line)).toContain("look");
    expect(userLineText(line)).toBe(userLineText(userLine("look", "u3")));
  });
});
