import { GatewayRequestError } from "../gateway/index.js";
import { commandArgs } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { CONNECTION_FLAGS, connectToGateway } from "./gateway-connection.js";

export const PERMISSIONS_USAGE = `usage: rudder permissions list <channel>
       rudder permissions allow <channel> <request-id>
       rudder permissions deny <channel> <request-id> ["message for the agent"]
  (all take --url URL and --data DIR to find the running gateway)
  What a channel's agent asks permission for (an rm, an "ask" rule), answered from a terminal
  as the page's Allow and Deny buttons do.`;

/** One line per request: its id, the tool, and what the tool would be given. */
function describeRequest(request: { id: string; toolName: string; input: unknown }): string {
  const input = request.input as Record<string, unknown>;
  const what =
    typeof input.command === "string"
      ? input.command
      : typeof input.path === "string"
        ? input.path
        : JSON.stringify(input);
  return `${request.id}\t${request.toolName}\t${what.replaceAll("\n", " ")}`;
}

/** `rudder permissions list|allow|deny`: a small client of the gateway's HTTP API. */
export async function permissionsCommandLine(
  argv: readonly string[],
  io: CommandIo,
): Promise<number> {
  const args = commandArgs("permissions", argv, CONNECTION_FLAGS, PERMISSIONS_USAGE, io);
  if (typeof args === "number") return args;
  const fail = (message: string, code = 2) => {
    io.stderr.write(`rudder permissions: ${message}\n`);
    return code;
  };
  const [action, channel, requestId, ...words] = args.positionals;
  if (action !== "list" && action !== "allow" && action !== "deny") {
    return fail(`needs list, allow or deny\n${PERMISSIONS_USAGE}`);
  }
  if (channel === undefined) return fail(`${action} needs a channel`);
  if (action !== "list" && requestId === undefined) return fail(`${action} needs a request id`);

  const connection = connectToGateway(args, io.env);
  if (!connection.ok) return fail(connection.error);
  const { client } = connection;
  try {
    if (action === "list") {
      const requests = await client.listPermissionRequests(channel);
      if (requests.length === 0) io.stdout.write("no permission requests waiting\n");
      for (const request of requests) io.stdout.write(`${describeRequest(request)}\n`);
      return 0;
    }
    const message = words.join(" ");
    await client.decidePermission(
      channel,
      requestId as string,
      action,
      message === "" ? undefined : message,
    );
    io.stdout.write(`${action === "allow" ? "allowed" : "denied"} ${requestId}\n`);
    return 0;
  } catch (error) {
    return fail(error instanceof GatewayRequestError ? error.message : String(error), 1);
  }
}
