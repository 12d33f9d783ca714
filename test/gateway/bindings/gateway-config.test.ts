/**
 * The gateway's configuration file: what is accepted, what is refused with one line naming
 * the file and the key, and which binding a channel resolves to (the first match; `defaults`
 * over the flags otherwise).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GatewayBindings } from "../../../src/gateway/bindings/bindings.js";
import { ChannelModels } from "../../../src/gateway/bindings/channel-models.js";
import {
  checkGatewayConfig,
  type LoadedConfig,
  loadGatewayConfig,
} from "../../../src/gateway/bindings/load-gateway-config.js";
import { parseChannelCommand } from "../../../src/gateway/routing/channel-command.js";

const folder = mkdtempSync(join(tmpdir(), "rudder-ws-config-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const file = join(folder, "config.json");
const fallback = { cwd: "/flags", engine: "rudder" as const, model: "flag-model" };

function loaded(json: unknown): LoadedConfig {
  const result = checkGatewayConfig(file, json, "/home/owner");
  if (result instanceof Error) throw result;
  return result;
}

function refusal(json: unknown): string {
  const result = checkGatewayConfig("config.json", json);
  return result instanceof Error ? result.message : "accepted";
}

const example = {
  defaults: { model: "default-model", systemPrompt: "Be brief." },
  bindings: [
    {
      name: "billing",
      match: ["web:billing-*", "slack:T1:C2:*"],
      cwd: "billing",
      engine: "claude",
      model: "opus",
      models: ["sonnet"],
      settings: { permissions: { deny: ["Bash(rm:*)"] }, sandbox: { enabled: true } },
      isolation: "worktree",
      budget: { dailyUsd: 5, timeZone: "Europe/Paris", channel: { dailyUsd: 1 } },
      maxLive: 2,
    },
    { name: "notes", match: ["telegram:*"], cwd: "~/notes" },
  ],
  budget: { monthlyUsd: 100, dailyTokens: 2_000_000 },
  telegram: { anything: ["its owner checks"] },
};

describe("checking a configuration", () => {
  it("accepts a complete one, folders resolved against the file's folder and the home", () => {
    const config = loaded(example).config;
    expect(config.bindings?.[0]?.cwd).toBe(join(folder, "billing"));
    expect(config.bindings?.[1]?.cwd).toBe("/home/owner/notes");
    expect(config.budget?.monthlyUsd).toBe(100);
  });

  it("refuses with one line naming the file and the key path", () => {
    const engine = structuredClone(example);
    (engine.bindings[1] as Record<string, unknown>).engine = "gpt";
    expect(refusal(engine)).toBe('config.json: bindings[1].engine must be "rudder" or "claude"');
    expect(refusal({ bindngs: [] })).toBe("config.json: bindngs is not a known key");
    expect(refusal({ defaults: { name: "x" } })).toBe(
      "config.json: defaults.name is not a known key",
    );
    expect(refusal({ budget: { dailyUsd: "5" } })).toBe(
      "config.json: budget.dailyUsd must be a number of US dollars",
    );
    expect(refusal({ budget: { monthlyTokens: 1.5 } })).toBe(
      "config.json: budget.monthlyTokens must be a whole number of tokens",
    );
    expect(refusal({ budget: { timeZone: "Mars/Olympus" } })).toMatch(
      /^config\.json: budget\.timeZone must be an IANA time zone name/,
    );
    expect(refusal({ budget: { channel: { timeZone: "UTC" } } })).toBe(
      "config.json: budget.channel.timeZone is not a known key",
    );
    expect(refusal({ bindings: [{ name: "a", match: [] }] })).toBe(
      "config.json: bindings[0].match must name at least one channel pattern",
    );
    expect(
      refusal({
        bindings: [
          { name: "a", match: ["x"] },
          { name: "a", match: ["y"] },
        ],
      }),
    ).toBe('config.json: bindings[1].name "a" is used twice');
    expect(refusal({ slack: "token" })).toBe("config.json: slack must be an object");
    expect(refusal([])).toBe("config.json: must be a JSON object");
  });

  it("names the line and column of a JSON mistake, and a missing file", async () => {
    writeFileSync(file, '{\n  "defaults": {\n    "model": "x",\n  }\n}\n');
    const bad = await loadGatewayConfig(file);
    expect(bad instanceof Error && bad.message).toMatch(
      new RegExp(`^${file}: not valid JSON at line 4, column 3`),
    );
    const missing = await loadGatewayConfig(join(folder, "absent.json"));
    expect(missing instanceof Error && missing.message).toBe(
      `${join(folder, "absent.json")}: no such file`,
    );
  });
});

describe("resolving a channel's binding", () => {
  const bindings = new GatewayBindings(loaded(example), fallback);

  it("takes the first binding whose pattern matches, defaults over the flags otherwise", () => {
    const billing = bindings.bindingFor("web:billing-42");
    expect(billing).toMatchObject({
      name: "billing",
      engine: "claude",
      model: "opus",
      cwd: join(folder, "billing"),
      systemPrompt: "Be brief.",
      isolation: "worktree",
      maxLive: 2,
      budget: { dailyUsd: 5 },
    });
    expect(bindings.bindingFor("slack:T1:C2:1712.5").name).toBe("billing");
    expect(bindings.bindingFor("slack:T1:C3:1712.5").name).toBe("defaults");
    expect(bindings.bindingFor("telegram:-100")).toMatchObject({
      name: "notes",
      engine: "rudder",
      model: "default-model",
      cwd: "/home/owner/notes",
      budget: undefined,
    });
    expect(bindings.bindingFor("web:main")).toMatchObject({
      name: "defaults",
      cwd: "/flags",
      engine: "rudder",
      model: "default-model",
    });
    expect(bindings.list().map((binding) => binding.name)).toEqual([
      "billing",
      "notes",
      "defaults",
    ]);
    expect(bindings.budget).toEqual({ monthlyUsd: 100, dailyTokens: 2_000_000 });
  });

  it("lets /model choose within the binding's models", () => {
    const models = new ChannelModels();
    const billing = bindings.bindingFor("web:billing-1");
    expect(models.choose("web:billing-1", billing, "haiku")).toBe(
      'the binding "billing" allows the models opus, sonnet, not "haiku"',
    );
    expect(models.choose("web:billing-1", billing, "sonnet")).toBeNull();
    expect(models.modelOf("web:billing-1", billing)).toBe("sonnet");
    expect(models.modelOf("web:billing-2", billing)).toBe("opus");
  });
});

describe("/status and /model typed in a channel", () => {
  it("are commands as a whole message (Telegram's @bot form too), other text is not", () => {
    expect(parseChannelCommand("/status")).toEqual({ name: "status" });
    expect(parseChannelCommand("/status@rudder_bot")).toEqual({ name: "status" });
    expect(parseChannelCommand("/model opus")).toEqual({ name: "model", model: "opus" });
    expect(parseChannelCommand("/model")).toEqual({ name: "model", model: "" });
    expect(parseChannelCommand("/status of the build?")).toBeNull();
    expect(parseChannelCommand("/model opus please")).toBeNull();
    expect(parseChannelCommand("/models")).toBeNull();
  });
});
