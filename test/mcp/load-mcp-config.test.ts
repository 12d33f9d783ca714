// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these are Claude Code's ${VAR} placeholders, not templates
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/agent/settings.js";
import {
  loadMcpConfig,
  type McpConfigOptions,
  splitConfigArgs,
} from "../../src/mcp/load-mcp-config.js";
import { parseMcpServers } from "../../src/mcp/server-config.js";
import { mcpToolName } from "../../src/mcp/tool-name.js";

let workspace: string;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), "rudder-mcp-config-"));
});
afterEach(() => rmSync(workspace, { recursive: true, force: true }));

function options(overrides: Partial<McpConfigOptions> = {}): McpConfigOptions {
  return {
    workspace,
    env: {},
    configArgs: [],
    baseDir: workspace,
    strict: false,
    settingsServers: {},
    ...overrides,
  };
}

function writeJson(name: string, value: unknown): string {
  const path = join(workspace, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe("parseMcpServers", () => {
  it("reads stdio entries as Claude Code writes them, expanding ${VAR} and ${VAR:-default}", () => {
    const parsed = parseMcpServers(
      {
        github: {
          type: "stdio",
          command: "${TOOLS}/github-mcp",
          args: ["--token", "${TOKEN}", "--mode=${MODE:-read}"],
          env: { LEVEL: 3, QUIET: true, HOME_DIR: "${HOME}" },
          timeout: 5000,
        },
        plain: { command: "server" },
      },
      "test",
      { TOOLS: "/opt/tools", TOKEN: "secret", HOME: "/home/me" },
    );
    expect(parsed.warnings).toEqual([]);
    expect(parsed.servers).toEqual([
      {
        name: "github",
        command: "/opt/tools/github-mcp",
        args: ["--token", "secret", "--mode=read"],
        env: { LEVEL: "3", QUIET: "true", HOME_DIR: "/home/me" },
        toolTimeoutMs: 5000,
        source: "test",
      },
      { name: "plain", command: "server", args: [], env: {}, source: "test" },
    ]);
  });

  it("skips what it cannot start, one warning each", () => {
    const parsed = parseMcpServers(
      {
        remote: { type: "http", url: "https://example.invalid/mcp" },
        events: { type: "sse", url: "https://example.invalid/sse" },
        empty: { command: "  " },
        listy: ["not", "an", "object"],
        envList: { command: "server", env: ["A=1"] },
        unset: { command: "server", args: ["${NOPE}"] },
      },
      "here",
      {},
    );
    expect(parsed.servers).toEqual([]);
    expect(parsed.warnings).toEqual([
      'here: MCP server "remote" has type "http", which rudder does not support (only stdio and sdk); skipped',
      'here: MCP server "events" has type "sse", which rudder does not support (only stdio and sdk); skipped',
      'here: MCP server "empty" is invalid (command: a non-empty command is required); skipped',
      'here: MCP server "listy" is not an object; skipped',
      'here: MCP server "envList" is invalid (env: an object of NAME: "value" is required); skipped',
      'here: MCP server "unset" uses unset environment variables: NOPE; skipped',
    ]);
  });

  it("takes the host's in-process servers (type sdk) by name", () => {
    const parsed = parseMcpServers({ tools: { type: "sdk", name: "tools" } }, "here", {});
    expect(parsed).toEqual({
      servers: [{ type: "sdk", name: "tools", source: "here" }],
      warnings: [],
    });
  });

  it("names tools mcp__<server>__<tool> with characters the API refuses replaced", () => {
    expect(mcpToolName("fake", "echo")).toBe("mcp__fake__echo");
    expect(mcpToolName("my.server", "do it!")).toBe("mcp__my_server__do_it_");
  });
});

describe("loadMcpConfig", () => {
  it("merges .mcp.json, settings and --mcp-config by name, later winning", async () => {
    writeJson(".mcp.json", {
      mcpServers: { a: { command: "project-a" }, b: { command: "project-b" } },
    });
    const file = writeJson("extra.json", { mcpServers: { c: { command: "file-c" } } });
    const loaded = await loadMcpConfig(
      options({
        settingsServers: { b: { command: "settings-b" } },
        configArgs: ["extra.json", JSON.stringify({ mcpServers: { a: { command: "inline-a" } } })],
      }),
    );
    expect(loaded.errors).toEqual([]);
    expect(loaded.warnings).toEqual([]);
    expect(
      loaded.servers.map((server) => ({
        name: server.name,
        command: server.type === "sdk" ? "" : server.command,
        source: server.source,
      })),
    ).toEqual([
      { name: "a", command: "inline-a", source: "--mcp-config (inline JSON)" },
      { name: "b", command: "settings-b", source: "settings (mcpServers)" },
      { name: "c", command: "file-c", source: file },
    ]);
  });

  it("with --strict-mcp-config reads only --mcp-config", async () => {
    writeJson(".mcp.json", { mcpServers: { a: { command: "project-a" } } });
    const loaded = await loadMcpConfig(
      options({
        strict: true,
        settingsServers: { b: { command: "settings-b" } },
        configArgs: [JSON.stringify({ mcpServers: { c: { command: "inline-c" } } })],
      }),
    );
    expect(loaded.servers.map((server) => server.name)).toEqual(["c"]);
  });

  it("splits file lists given in one value, but never an inline object", () => {
    expect(splitConfigArgs(["a.json,b.json c.json", '{"mcpServers": {}, "x": 1}'])).toEqual([
      "a.json",
      "b.json",
      "c.json",
      '{"mcpServers": {}, "x": 1}',
    ]);
  });

  it("reports a missing or broken --mcp-config as an error, a broken .mcp.json as a warning", async () => {
    writeFileSync(join(workspace, ".mcp.json"), "{ not json");
    writeJson("array.json", []);
    const loaded = await loadMcpConfig(
      options({ configArgs: ["missing.json", "array.json", "{oops"] }),
    );
    expect(loaded.warnings).toEqual([
      expect.stringMatching(/\.mcp\.json: invalid JSON \(.*\); file ignored$/),
    ]);
    expect(loaded.errors).toEqual([
      `${join(workspace, "missing.json")}: file not found`,
      `${join(workspace, "array.json")}: expected an object such as {"mcpServers": {...}}`,
      expect.stringMatching(/^--mcp-config \(inline JSON\): invalid JSON/),
    ]);
  });

  it("takes mcpServers from the settings files, a later file's entry replacing an earlier one's", async () => {
    const home = join(workspace, "home");
    mkdirSync(join(home, ".rudder"), { recursive: true });
    mkdirSync(join(workspace, ".rudder"));
    writeFileSync(
      join(home, ".rudder", "settings.json"),
      JSON.stringify({ mcpServers: { a: { command: "user-a" }, b: { command: "user-b" } } }),
    );
    writeFileSync(
      join(workspace, ".rudder", "settings.json"),
      JSON.stringify({ mcpServers: { b: { command: "project-b" } } }),
    );
    const settings = await loadSettings({ cwd: workspace, home });
    expect(settings.warnings).toEqual([]);
    expect(settings.settings.mcpServers).toEqual({
      a: { command: "user-a" },
      b: { command: "project-b" },
    });
    const broken = await loadSettings({ cwd: workspace, home, settingsFile: '{"mcpServers": []}' });
    expect(broken.errors).toEqual([
      "--settings (inline JSON): invalid settings (mcpServers: Invalid type: Expected Object but received Array)",
    ]);
  });
});
