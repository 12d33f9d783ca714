import { GatewayRequestError } from "../gateway/index.js";
import { commandArgs } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { CONNECTION_FLAGS, connectToGateway } from "./gateway-connection.js";

export const PAIRING_USAGE = `usage: rudder pairing list
       rudder pairing approve <source> <CODE>
  (both take --url URL and --data DIR to find the running gateway)
  A stranger who writes to a chat source (a Telegram bot, say) is given a short code; approve
  it here, on the page, or with /pair CODE from an allowed chat, and they are let in.`;

/** `rudder pairing list|approve`: a small client of the gateway's HTTP API. */
export async function pairingCommandLine(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = commandArgs("pairing", argv, CONNECTION_FLAGS, PAIRING_USAGE, io);
  if (typeof args === "number") return args;
  const fail = (message: string, code = 2) => {
    io.stderr.write(`rudder pairing: ${message}\n`);
    return code;
  };
  const [action, source, code] = args.positionals;
  if (action !== "list" && action !== "approve") {
    return fail(`needs list or approve\n${PAIRING_USAGE}`);
  }
  if (action === "approve" && (source === undefined || code === undefined)) {
    return fail("approve needs a source and a code: rudder pairing approve telegram CODE");
  }
  const connection = connectToGateway(args, io.env);
  if (!connection.ok) return fail(connection.error);
  const { client } = connection;
  try {
    if (action === "list") {
      const pairings = await client.listPairings();
      if (pairings.length === 0) io.stdout.write("no pairing codes waiting, nobody paired\n");
      for (const pairing of pairings) {
        const state = pairing.approvedAt
          ? `let in ${pairing.approvedAt} by ${pairing.approvedBy ?? "?"}`
          : `waiting until ${pairing.expiresAt}`;
        io.stdout.write(
          `${pairing.source}\t${pairing.code}\tuser ${pairing.userId}\t${pairing.name}\t${state}\n`,
        );
      }
      return 0;
    }
    const pairing = await client.approvePairing(source as string, code as string);
    io.stdout.write(`let in ${pairing.name} (user ${pairing.userId}) on ${pairing.source}\n`);
    return 0;
  } catch (error) {
    return fail(error instanceof GatewayRequestError ? error.message : String(error), 1);
  }
}
