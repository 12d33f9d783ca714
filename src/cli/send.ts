import { GatewayRequestError } from "../gateway/index.js";
import { commandArgs } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { CONNECTION_FLAGS, connectToGateway } from "./gateway-connection.js";

export const SEND_USAGE = `usage: rudder send [--url URL] [--data DIR] <channel> "<text>"
  Posts a message into a channel of the running gateway and prints its id and disposition.`;

/** `rudder send`: a small client of the gateway's HTTP API. */
export async function sendCommandLine(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = commandArgs("send", argv, CONNECTION_FLAGS, SEND_USAGE, io);
  if (typeof args === "number") return args;
  const [channel, ...words] = args.positionals;
  const text = words.join(" ");
  if (channel === undefined || text.trim() === "") {
    io.stderr.write(`rudder send: needs a channel and a text\n${SEND_USAGE}\n`);
    return 2;
  }
  const connection = connectToGateway(args, io.env);
  if (!connection.ok) {
    io.stderr.write(`rudder send: ${connection.error}\n`);
    return 2;
  }
  try {
    const sent = await connection.client.sendMessage(channel, text);
    io.stdout.write(`${sent.id} ${sent.disposition}\n`);
    return 0;
  } catch (error) {
    const message = error instanceof GatewayRequestError ? error.message : String(error);
    io.stderr.write(`rudder send: ${message}\n`);
    return 1;
  }
}
