import { GatewayRequestError } from "../gateway/index.js";
import { commandArgs } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { CONNECTION_FLAGS, connectToGateway } from "./gateway-connection.js";

export const LINK_USAGE = `usage: rudder link [--url URL] [--data DIR]
  Prints a fresh link to the running gateway's page. The link works once, within 10 minutes:
  the page trades its code for the token (read from the data folder, as rudder send does).`;

/** `rudder link`: asks the running gateway for a link code and prints the page's link. */
export async function linkCommandLine(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = commandArgs("link", argv, CONNECTION_FLAGS, LINK_USAGE, io);
  if (typeof args === "number") return args;
  const fail = (message: string, code: number) => {
    io.stderr.write(`rudder link: ${message}\n`);
    return code;
  };
  if (args.positionals.length > 0) return fail(`unexpected argument "${args.positionals[0]}"`, 2);
  const connection = connectToGateway(args, io.env);
  if (!connection.ok) return fail(connection.error, 2);
  try {
    const { code, expiresAt } = await connection.client.createLinkCode();
    io.stdout.write(`${connection.url.replace(/\/+$/, "")}/#code=${code}\n`);
    io.stderr.write(`(works once, until ${expiresAt})\n`);
    return 0;
  } catch (error) {
    return fail(error instanceof GatewayRequestError ? error.message : String(error), 1);
  }
}
