import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TelegramApiError } from "../../../src/channels/telegram/telegram-api.js";
import { telegramConfig, telegramSection } from "../../../src/channels/telegram/telegram-config.js";
import { retryDelayMs } from "../../../src/channels/telegram/telegram-platform.js";
import { parseCommand, splitMessage } from "../../../src/channels/telegram/telegram-text.js";

describe("splitMessage", () => {
  it("keeps a text that fits whole", () => {
    expect(splitMessage("short")).toEqual(["short"]);
    expect(splitMessage("x".repeat(4096))).toEqual(["x".repeat(4096)]);
  });

  it("cuts after the last line break that fits", () => {
    expect(splitMessage("aaaa\nbbb\ncc", 9)).toEqual(["aaaa\nbbb", "cc"]);
    expect(splitMessage("aaaa\nbbbbbbb", 8)).toEqual(["aaaa", "bbbbbbb"]);
  });

  it("falls back to a space, then to the limit, never halving a surrogate pair", () => {
    expect(splitMessage("one two three", 8)).toEqual(["one two", "three"]);
    expect(splitMessage("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    const emoji = "\u{1F600}";
    const parts = splitMessage(`abc${emoji}def`, 4);
    expect(parts).toEqual(["abc", `${emoji}de`, "f"]);
    expect(parts.join("")).toBe(`abc${emoji}def`);
  });
});

describe("parseCommand", () => {
  it("reads /name, /name@bot and arguments", () => {
    expect(parseCommand("/help")).toEqual({ name: "help", bot: undefined, args: "" });
    expect(parseCommand("/Deny@my_bot abc123  not now ")).toEqual({
      name: "deny",
      bot: "my_bot",
      args: "abc123  not now",
    });
  });

  it("leaves paths and plain text alone", () => {
    expect(parseCommand("/tmp/x is full")).toBeNull();
    expect(parseCommand("hello /help")).toBeNull();
    expect(parseCommand("/")).toBeNull();
  });
});

describe("retryDelayMs", () => {
  const backoff = { initialMs: 100, maxMs: 1000 };

  it("doubles per failure up to the cap", () => {
    expect(
      [1, 2, 3, 4, 5, 50].map((failures) => retryDelayMs(new Error("x"), failures, backoff)),
    ).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it("takes a 429's retry_after instead", () => {
    const limited = new TelegramApiError("getUpdates", 429, "Too Many Requests", {
      retryAfterSeconds: 7,
    });
    expect(retryDelayMs(limited, 1, backoff)).toBe(7000);
  });
});

describe("telegramConfig", () => {
  const folder = mkdtempSync(join(tmpdir(), "rudder-telegram-config-"));
  const tokenFile = join(folder, "token");
  writeFileSync(tokenFile, "123456:ABC-def_ghi\n");
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it("is off without a token", () => {
    expect(telegramConfig({ env: {} })).toBeNull();
  });

  it("reads the token file and the allow-list, flags before the environment", () => {
    expect(
      telegramConfig({
        tokenFile,
        allow: "111, -100200,111",
        env: { RUDDER_TELEGRAM_ALLOW: "999", RUDDER_TELEGRAM_API_URL: "http://127.0.0.1:9" },
      }),
    ).toEqual({
      token: "123456:ABC-def_ghi",
      allow: ["111", "-100200"],
      apiUrl: "http://127.0.0.1:9",
    });
    expect(
      telegramConfig({ env: { RUDDER_TELEGRAM_TOKEN: "1:x", RUDDER_TELEGRAM_ALLOW: "5" } }),
    ).toEqual({ token: "1:x", allow: ["5"] });
  });

  it("starts in pairing mode without an allow-list", () => {
    expect(telegramConfig({ tokenFile, env: {} })).toEqual({
      token: "123456:ABC-def_ghi",
      allow: [],
    });
    expect(telegramConfig({ tokenFile, allow: " , ", env: {} })).toMatchObject({ allow: [] });
  });

  it("refuses ids that are not numeric and an incomplete setup, in one line without the token", () => {
    for (const result of [
      telegramConfig({ tokenFile, allow: "@someone", env: {} }),
      telegramConfig({ allow: "111", env: {} }),
      telegramConfig({ tokenFile: join(folder, "missing"), allow: "111", env: {} }),
      telegramConfig({ tokenFile, allow: "1", env: { RUDDER_TELEGRAM_API_URL: "ftp://x" } }),
    ]) {
      expect(result).toBeInstanceOf(Error);
      const message = (result as Error).message;
      expect(message.split("\n")).toHaveLength(1);
      expect(message).not.toContain("ABC-def");
    }
  });
});

describe("telegramSection", () => {
  it("takes groups: mention or all from the configuration file's telegram section", () => {
    expect(telegramSection(undefined)).toEqual({});
    expect(telegramSection({})).toEqual({});
    expect(telegramSection({ groups: "all" })).toEqual({ groups: "all" });
    expect(telegramSection({ groups: "mention" })).toEqual({ groups: "mention" });
  });

  it("refuses a wrong value or an unknown key with one line naming it", () => {
    expect((telegramSection({ groups: "some" }) as Error).message).toBe(
      'telegram.groups must be "mention" or "all"',
    );
    expect((telegramSection({ group: "all" }) as Error).message).toBe(
      "telegram.group is not a known key",
    );
  });
});
