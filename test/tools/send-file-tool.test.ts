/**
 * The `send_file` tool as its MCP server serves it (`serveTools` over in-memory streams, the
 * JSON-RPC an engine speaks): listed with its input schema; a file inside the workspace is
 * accepted; a path outside it, a symbolic link leading out, a file over the size cap and a
 * missing path are refused with one line the model can read.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { serveTools } from "../../src/mcp/tool-server.js";
import { createSendFileTool } from "../../src/tools/send-file-tool.js";
import { type TempFolder, tempFolder } from "../helpers/temp-folders.js";

let folder: TempFolder;
let workspace: string;
const input = new PassThrough();
const output = new PassThrough();
const answers = new Map<number, (value: Record<string, unknown>) => void>();
let nextId = 1;
let served: Promise<void>;

function request(method: string, params: unknown = {}): Promise<Record<string, unknown>> {
  const id = nextId++;
  const answered = new Promise<Record<string, unknown>>((resolve) => answers.set(id, resolve));
  input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  return answered;
}

async function send(path: string): Promise<{ text: string; isError: boolean }> {
  const answer = await request("tools/call", { name: "send_file", arguments: { path } });
  const result = answer.result as { content: Array<{ text: string }>; isError: boolean };
  return { text: result.content[0]?.text ?? "", isError: result.isError };
}

beforeAll(() => {
  folder = tempFolder("rudder-send-file-");
  workspace = join(folder.path, "work");
  mkdirSync(join(workspace, "out"), { recursive: true });
  writeFileSync(join(workspace, "out", "chart.png"), Buffer.alloc(40, 1));
  writeFileSync(join(workspace, "big.bin"), Buffer.alloc(101, 1));
  writeFileSync(join(folder.path, "secret.txt"), "outside");
  symlinkSync(join(folder.path, "secret.txt"), join(workspace, "link.txt"));
  let buffered = "";
  output.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
      const message = JSON.parse(buffered.slice(0, end)) as { id: number };
      buffered = buffered.slice(end + 1);
      answers.get(message.id)?.(message as unknown as Record<string, unknown>);
    }
  });
  served = serveTools({
    tools: [createSendFileTool(100)],
    workspace,
    name: "rudder",
    version: "test",
    input,
    output,
    signal: new AbortController().signal,
  });
});

afterAll(async () => {
  input.end();
  await served;
  folder.remove();
});

it("answers initialize and lists send_file with its path and caption", async () => {
  const init = await request("initialize", { protocolVersion: "2025-06-18" });
  expect(init.result).toMatchObject({
    protocolVersion: "2025-06-18",
    capabilities: { tools: {} },
    serverInfo: { name: "rudder" },
  });
  const list = (await request("tools/list")).result as { tools: Array<Record<string, unknown>> };
  expect(list.tools.map((tool) => tool.name)).toEqual(["send_file"]);
  expect(list.tools[0]?.inputSchema).toMatchObject({
    required: ["path"],
    properties: { path: { type: "string" }, caption: { type: "string" } },
  });
});

it("accepts a file inside the workspace", async () => {
  expect(await send("out/chart.png")).toEqual({
    text: "out/chart.png (40 bytes) will be sent to the conversation with your answer.",
    isError: false,
  });
});

it("refuses a path outside the workspace, a link leading out, a file over the cap", async () => {
  const outside = await send("../secret.txt");
  expect(outside.isError).toBe(true);
  expect(outside.text).toMatch(/^The path \.\.\/secret\.txt is outside the workspace/);
  const link = await send("link.txt");
  expect(link.isError).toBe(true);
  expect(link.text).toMatch(/link\.txt is outside the workspace .*through a symbolic link/);
  expect(await send("big.bin")).toEqual({
    text: "big.bin is 101 bytes; files up to 100 bytes can be sent. Make it smaller (compress it, split it) and send that.",
    isError: true,
  });
  expect(await send("missing.pdf")).toEqual({ text: "missing.pdf does not exist.", isError: true });
  const invalid = await request("tools/call", { name: "send_file", arguments: {} });
  expect((invalid.result as { isError: boolean }).isError).toBe(true);
});
