import { packageVersion } from "../gateway/http/package-info.js";
import { exitWhenFlushed, exitWithoutTeardown } from "./exit-without-teardown.js";
import { loadRunBundle } from "./load-run-bundle.js";

const USAGE = `rudder: an agent harness and channel gateway

usage:
  rudder serve [--port N] [--host H] [--data DIR] [--max-live N] [--max-agents N] [--engine rudder|claude]
               [--telegram-token-file FILE] [--slack-app-token-file FILE --slack-bot-token-file FILE]
               [--discord-token-file FILE] [--config FILE]   (all of them: rudder serve --help)
  rudder run [--model M] [--settings FILE] [--cwd DIR] [--output-format text|json|stream-json]
             [--resume ID | --continue] [--mcp-config FILE] "<prompt>"
  rudder chat [--model M] [--settings FILE] [--cwd DIR] [--wake] [--resume ID | --continue]
  rudder link                 (a fresh link to the running gateway's page)
  rudder send <channel> "<text>"
  rudder permissions list <channel> | allow <channel> <id> | deny <channel> <id> ["message"]
  rudder pairing list | approve <source> <CODE>
  rudder schedule add "<cron>" --channel C "<prompt>" | list | rm <id>
  rudder channels [list] | rm <id> [--force]
  rudder sessions [list [--all]] | show <id> | rm <id>... | prune --older-than 30d
  rudder acp [--model M] [--settings FILE] [--mcp-config FILE]   (Agent Client Protocol, stdio)
  rudder --version

Run "rudder <command> --help" for a command's options.`;

const io = () => ({
  stdout: process.stdout,
  stderr: process.stderr,
  // A getter: the first touch of process.stdin sets up the stream (~3 ms), and a one-shot
  // `rudder run "<prompt>"` never reads it.
  get stdin() {
    return process.stdin;
  },
  env: process.env,
});

/** Hosts that drive `claude` pass `-p` or `--input-format` without a subcommand. */
function looksLikeHeadlessRun(argv: readonly string[]): boolean {
  return argv.some(
    (token) =>
      token === "-p" ||
      token === "--print" ||
      token === "--input-format" ||
      token.startsWith("--input-format="),
  );
}

/** `rudder run`'s code: compiled with V8's code cache where the build allows, else its ES modules. */
async function runModule(): Promise<typeof import("./run.js")> {
  return loadRunBundle(process.env) ?? (await import("./run.js"));
}

/** Runs the command line and resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "--version" || command === "-v") {
    process.stdout.write(`${packageVersion()} (rudder)\n`);
    return 0;
  }
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // Subcommands are loaded when chosen, so a `rudder run` child (started per channel by
  // the gateway, or by an Agent SDK host) does not pay for the gateway and chat at startup.
  if (command === "run") {
    exitWithoutTeardown();
    return exitWhenFlushed(await (await runModule()).runCommandLine(rest, io()));
  }
  if (command === "chat") return (await import("./chat/chat.js")).chatCommandLine(rest, io());
  if (command === "serve") return (await import("./serve.js")).serveCommandLine(rest, io());
  if (command === "link") return (await import("./link.js")).linkCommandLine(rest, io());
  if (command === "send") return (await import("./send.js")).sendCommandLine(rest, io());
  if (command === "permissions") {
    return (await import("./permissions.js")).permissionsCommandLine(rest, io());
  }
  if (command === "pairing") {
    return (await import("./pairing.js")).pairingCommandLine(rest, io());
  }
  if (command === "schedule") {
    return (await import("./schedule.js")).scheduleCommandLine(rest, io());
  }
  if (command === "channels") {
    return (await import("./channels.js")).channelsCommandLine(rest, io());
  }
  if (command === "sessions") {
    return (await import("./sessions.js")).sessionsCommandLine(rest, io());
  }
  if (command === "acp") return (await import("./acp.js")).acpCommandLine(rest, io());
  // Hidden: the channel tools (send_file) the gateway gives its agents, as an MCP server.
  if (command === "mcp-channel-tools") {
    // Through run.js, not a chunk of its own: the bundler would move what it shares with
    // `rudder run` (the workspace file checks) into new chunks that every one-shot run loads.
    return (await import("./run.js")).mcpChannelToolsCommandLine(rest, io());
  }
  if (looksLikeHeadlessRun(argv)) {
    exitWithoutTeardown();
    return exitWhenFlushed(await (await runModule()).runCommandLine(argv, io()));
  }
  process.stderr.write(`rudder: unknown command "${command}"\n\n${USAGE}\n`);
  return 2;
}
