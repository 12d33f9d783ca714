import { readFileSync } from "node:fs";
import type { StdioServerConfig } from "../../src/mcp/server-config.js";
import { FAKE_MCP_SERVER } from "../helpers/fixtures.js";

/** A stdio server entry that runs the fake MCP server with `args`. */
export function fakeServer(name: string, args: string[] = []): StdioServerConfig {
  return {
    name,
    command: process.execPath,
    args: [FAKE_MCP_SERVER, ...args],
    env: {},
    source: "test",
  };
}

/** The pids the fake server wrote to its pid file (itself, then its grandchild). */
export function readPids(file: string): number[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map(Number);
  } catch {
    return [];
  }
}
