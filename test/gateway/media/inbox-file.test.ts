/**
 * The workspace's inbox, where files people send are saved: names sanitised (`..`, slashes,
 * control characters, very long names), a taken name suffixed `-1`, `-2` before its extension,
 * and nothing ever written outside the workspace (an `inbox` the agent replaced by a link out,
 * a name planted as a link). Then the gateway's media handling on top: each file an attachment
 * of the message, an image never a line of its text.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChannelMedia } from "../../../src/gateway/media/channel-media.js";
import {
  InboxError,
  sanitiseFileName,
  saveInboxFile,
} from "../../../src/gateway/media/inbox-file.js";
import { type TempFolder, tempFolder } from "../../helpers/temp-folders.js";

/** A 1x1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

let root: TempFolder;
let count = 0;

/** A fresh workspace (and, beside it, a folder outside it) for one case. */
function workspaces(): { workspace: string; outside: string } {
  count += 1;
  const workspace = join(root.path, `workspace-${count}`);
  const outside = join(root.path, `outside-${count}`);
  mkdirSync(workspace);
  mkdirSync(outside);
  return { workspace, outside };
}

beforeAll(() => {
  root = tempFolder("rudder-inbox-");
});

afterAll(() => root.remove());

describe("sanitiseFileName", () => {
  it("keeps letters, digits, dots, dashes and underscores, and only the last part of a path", () => {
    expect(sanitiseFileName("report 2026 (final).pdf", "file")).toBe("report-2026-final-.pdf");
    expect(sanitiseFileName("../../etc/passwd", "file")).toBe("passwd");
    expect(sanitiseFileName("..\\..\\boot.ini", "file")).toBe("boot.ini");
    expect(sanitiseFileName("a/b/../c.txt", "file")).toBe("c.txt");
    expect(sanitiseFileName("notes\u0000\n\r\u001b[31m.txt", "file")).toBe("notes-31m.txt");
  });

  it("falls back for names that are nothing once cleaned: dots, slashes, empty, absent", () => {
    for (const name of ["..", ".", "../..", "/", "", "\u0000\u0001", "...", undefined]) {
      expect(sanitiseFileName(name, "file")).toBe("file");
    }
    expect(sanitiseFileName(".hidden", "file")).toBe("hidden");
  });

  it("cuts a very long name to 80 characters, keeping its extension", () => {
    const long = sanitiseFileName(`${"a".repeat(500)}.pdf`, "file");
    expect(long).toHaveLength(80);
    expect(long.endsWith(".pdf")).toBe(true);
    const longExtension = sanitiseFileName(`x.${"b".repeat(300)}`, "file");
    expect(longExtension.length).toBeLessThanOrEqual(80);
    expect(longExtension).toMatch(/^[A-Za-z0-9._-]+$/);
  });
});

describe("saveInboxFile", () => {
  it("never overwrites: a taken name gets -1, -2 before its extension, one without none", async () => {
    const { workspace } = workspaces();
    const saved = [];
    for (const body of ["one", "two", "three"]) {
      saved.push(await saveInboxFile(workspace, "photo.jpg", Buffer.from(body)));
    }
    expect(saved).toEqual(["inbox/photo.jpg", "inbox/photo-1.jpg", "inbox/photo-2.jpg"]);
    expect(readFileSync(join(workspace, "inbox", "photo.jpg"), "utf8")).toBe("one");
    expect(readFileSync(join(workspace, "inbox", "photo-2.jpg"), "utf8")).toBe("three");
    await saveInboxFile(workspace, "README", Buffer.from("a"));
    expect(await saveInboxFile(workspace, "README", Buffer.from("b"))).toBe("inbox/README-1");
  });

  it("writes nothing through a name planted as a link: the next free name is taken", async () => {
    const { workspace, outside } = workspaces();
    mkdirSync(join(workspace, "inbox"));
    symlinkSync(join(outside, "target.txt"), join(workspace, "inbox", "notes.txt"));
    expect(await saveInboxFile(workspace, "notes.txt", Buffer.from("mine"))).toBe(
      "inbox/notes-1.txt",
    );
    expect(existsSync(join(outside, "target.txt"))).toBe(false);
    expect(lstatSync(join(workspace, "inbox", "notes.txt")).isSymbolicLink()).toBe(true);
  });

  it("refuses an inbox the agent replaced by a link out of the workspace, writing nothing", async () => {
    const { workspace, outside } = workspaces();
    symlinkSync(join(outside, "not-yet"), join(workspace, "inbox"));
    await expect(saveInboxFile(workspace, "photo.png", PNG)).rejects.toThrow(
      /inbox\/ in the workspace is not a folder/,
    );
    rmSync(join(workspace, "inbox"));
    symlinkSync(outside, join(workspace, "inbox"));
    await expect(saveInboxFile(workspace, "photo.png", PNG)).rejects.toThrow(InboxError);
    await expect(saveInboxFile(workspace, "photo.png", PNG)).rejects.toThrow(
      /inbox\/ in the workspace is not a folder/,
    );
    expect(readdirSync(outside)).toEqual([]);
  });

  it("refuses an inbox that is a file, and one reached through a workspace link elsewhere", async () => {
    const { workspace } = workspaces();
    writeFileSync(join(workspace, "inbox"), "not a folder");
    await expect(saveInboxFile(workspace, "a.txt", Buffer.from("x"))).rejects.toThrow(
      /not a folder/,
    );
    rmSync(join(workspace, "inbox"));
    // A workspace that is itself a link is where the agent works: its inbox is inside it.
    const linked = join(root.path, `linked-${count}`);
    symlinkSync(workspace, linked);
    expect(await saveInboxFile(linked, "a.txt", Buffer.from("x"))).toBe("inbox/a.txt");
    expect(readFileSync(join(workspace, "inbox", "a.txt"), "utf8")).toBe("x");
  });
});

describe("ChannelMedia", () => {
  const media = (workspace: string) => new ChannelMedia({ workspaceFor: async () => workspace });
  const signal = new AbortController().signal;

  it("makes each file an attachment; an image is no line of the text, a file is", async () => {
    const { workspace } = workspaces();
    const received = await media(workspace).receive(
      "c",
      "  look  ",
      [
        { kind: "image", name: "../shot.png", mediaType: "image/png", data: PNG },
        { kind: "file", name: "a/b.txt", mediaType: "text/plain", data: Buffer.from("hi") },
      ],
      signal,
    );
    expect(received).toEqual({
      text: "look\n[attached file: inbox/b.txt (2 bytes, text/plain)]",
      attachments: [
        { kind: "image", path: "inbox/shot.png", mediaType: "image/png", size: PNG.length },
        { kind: "file", path: "inbox/b.txt", mediaType: "text/plain", size: 2 },
      ],
    });
  });

  it("takes an 'image' whose bytes are not one as a file, named in the text", async () => {
    const { workspace } = workspaces();
    const received = await media(workspace).receive(
      "c",
      "",
      [{ kind: "image", name: "fake.png", mediaType: "image/png", data: Buffer.from("<svg/>") }],
      signal,
    );
    expect(received).toMatchObject({
      text: "[attached file: inbox/fake.png (6 bytes, image/png)]",
      attachments: [{ kind: "file", path: "inbox/fake.png" }],
    });
  });

  it("answers, saving nothing outside, when the inbox leads out of the workspace", async () => {
    const { workspace, outside } = workspaces();
    symlinkSync(outside, join(workspace, "inbox"));
    const received = await media(workspace).receive(
      "c",
      "look",
      [{ kind: "image", name: "shot.png", mediaType: "image/png", data: PNG }],
      signal,
    );
    expect(received).toEqual({
      answer: "The file shot.png could not be saved: inbox/ in the workspace is not a folder",
    });
    expect(readdirSync(outside)).toEqual([]);
  });
});
