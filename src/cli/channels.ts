/** `rudder channels`: the running gateway's channels, listed and removed through its HTTP API. */
import { GatewayRequestError } from "../gateway/index.js";
import { booleanFlag, commandArgs } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { CONNECTION_FLAGS, connectToGateway } from "./gateway-connection.js";

export const CHANNELS_USAGE = `usage: rudder channels [list]
       rudder channels rm <id> [--force]
  (both take --url URL and --data DIR to find the running gateway)
  list: each channel's id, binding, last activity and name, most recent first.
  rm: removes the channel: its agent stopped, its worktree removed (its branch kept unless
      merged), its history, grants and schedules deleted; its spend stays counted. Refused
      while a turn runs in it or its worktree holds uncommitted work, unless --force.`;

/** `rudder channels [list] | rm <id> [--force]`: a small client of the gateway's HTTP API. */
export async function channelsCommandLine(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = commandArgs(
    "channels",
    argv,
    { ...CONNECTION_FLAGS, force: { type: "boolean" } },
    CHANNELS_USAGE,
    io,
  );
  if (typeof args === "number") return args;
  const fail = (message: string, code = 2) => {
    io.stderr.write(`rudder channels: ${message}\n`);
    return code;
  };
  const [action = "list", ...rest] = args.positionals;
  if (action !== "list" && action !== "rm") return fail(`needs list or rm\n${CHANNELS_USAGE}`);
  if (action === "rm" && rest.length !== 1) return fail("rm needs exactly one channel id");
  if (action === "list" && rest.length > 0) return fail("list takes no arguments");
  const connection = connectToGateway(args, io.env);
  if (!connection.ok) return fail(connection.error);
  const { client } = connection;
  try {
    if (action === "rm") {
      const removed = await client.removeChannel(rest[0] as string, booleanFlag(args, "force"));
      io.stdout.write(`${removed.text}\n`);
      return 0;
    }
    const channels = await client.listChannels();
    if (channels.length === 0) io.stdout.write("no channels\n");
    for (const channel of channels) {
      const name = channel.title ?? channel.chatTitle ?? "";
      const state = channel.archivedAt === null ? "" : "archived";
      io.stdout.write(
        `${[channel.id, channel.binding, channel.lastActivityAt, state, name].join("\t").trimEnd()}\n`,
      );
    }
    return 0;
  } catch (error) {
    return fail(error instanceof GatewayRequestError ? error.message : String(error), 1);
  }
}
