/** The Bot API client on its own, against a local server (no network). */
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { TelegramApi } from "../../../src/channels/telegram/telegram-api.js";

let server: Server | undefined;
const sockets = new Set<Socket>();

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe("TelegramApi", () => {
  it("rejects with the abort reason when aborted while node:https loads", async () => {
    // A server that takes the connection and never says a word: the TLS handshake hangs.
    server = createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const api = new TelegramApi({ token: "123:abcdef", baseUrl: `https://127.0.0.1:${port}` });
    const controller = new AbortController();
    // The call runs up to loading node:https and returns; the abort lands there.
    const pending = api.getMe(controller.signal);
    controller.abort(new Error("stopped"));
    await expect(pending).rejects.toThrow("stopped");
  }, 5000);
});
