import { GatewayRequestError } from "../gateway/index.js";
import { commandArgs, stringFlag } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { CONNECTION_FLAGS, connectToGateway } from "./gateway-connection.js";

export const SCHEDULE_USAGE = `usage: rudder schedule add "<cron>" --channel C "<prompt>"
       rudder schedule list
       rudder schedule rm <id>
       rudder schedule resume <id>      (a schedule that paused itself: failures, a budget)
  (all take --url URL and --data DIR to find the running gateway)
  Cron has 5 fields, or 6 with seconds first: "0 9 * * 1-5" is 09:00 on weekdays.`;

/** `rudder schedule add|list|rm`: a small client of the gateway's HTTP API. */
export async function scheduleCommandLine(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = commandArgs(
    "schedule",
    argv,
    { ...CONNECTION_FLAGS, channel: { type: "string" } },
    SCHEDULE_USAGE,
    io,
  );
  if (typeof args === "number") return args;
  const fail = (message: string, code = 2) => {
    io.stderr.write(`rudder schedule: ${message}\n`);
    return code;
  };
  const [action, ...rest] = args.positionals;
  if (action !== "add" && action !== "list" && action !== "rm" && action !== "resume") {
    return fail(`needs add, list, rm or resume\n${SCHEDULE_USAGE}`);
  }
  const channel = stringFlag(args, "channel");
  const [cron, ...promptWords] = rest;
  if (
    action === "add" &&
    (cron === undefined || channel === undefined || promptWords.length === 0)
  ) {
    return fail(`add needs a cron expression, --channel and a prompt\n${SCHEDULE_USAGE}`);
  }
  if ((action === "rm" || action === "resume") && rest.length !== 1) {
    return fail(`${action} needs exactly one schedule id`);
  }

  const connection = connectToGateway(args, io.env);
  if (!connection.ok) return fail(connection.error);
  const { client } = connection;
  try {
    if (action === "add") {
      const added = await client.addSchedule({
        cron: cron as string,
        channel: channel as string,
        prompt: promptWords.join(" "),
      });
      io.stdout.write(
        `${added.id} ${added.cron} -> ${added.channelId} (next ${added.nextRunAt ?? "never"})\n`,
      );
    } else if (action === "list") {
      const schedules = await client.listSchedules();
      if (schedules.length === 0) io.stdout.write("no schedules\n");
      for (const schedule of schedules) {
        // A schedule that paused itself says why (a budget reached, its last failure).
        const why = schedule.lastError === null ? "" : ` (${schedule.lastError})`;
        const state = schedule.paused ? `paused${why}` : `next ${schedule.nextRunAt ?? "never"}`;
        io.stdout.write(
          `${schedule.id}\t${schedule.cron}\t${schedule.channelId}\t${state}\t${schedule.prompt}\n`,
        );
      }
    } else if (action === "resume") {
      const resumed = await client.resumeSchedule(rest[0] as string);
      io.stdout.write(`${resumed.id} active (next ${resumed.nextRunAt ?? "never"})\n`);
    } else if (!(await client.removeSchedule(rest[0] as string))) {
      return fail(`no schedule with id ${rest[0]}`, 1);
    }
    return 0;
  } catch (error) {
    return fail(error instanceof GatewayRequestError ? error.message : String(error), 1);
  }
}
