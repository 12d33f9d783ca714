import { proxyEnvironment } from "./proxy-bridge.js";

/**
 * The environment variables no bash command gets, sandboxed or not (background tasks
 * included): the model's credentials, which a command could print into the conversation or
 * send wherever the network reaches, and the gateway's token. Hooks and MCP servers keep them:
 * they are programs the user configured, started unconfined as in Claude Code (a hook may call
 * the model; a server needs its credentials), not commands the model chose.
 */
export const CREDENTIAL_VARIABLES = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "RUDDER_TOKEN",
  "RUDDER_TELEGRAM_TOKEN",
];

/** `env` without `CREDENTIAL_VARIABLES`: what a bash command starts with. */
export function withoutCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept = { ...env };
  for (const name of CREDENTIAL_VARIABLES) delete kept[name];
  return kept;
}

/** A command's environment inside: rudder's, without credentials, TMPDIR the private /tmp. */
export function commandEnvironment(env: NodeJS.ProcessEnv, proxied: boolean): NodeJS.ProcessEnv {
  return withoutCredentials({
    ...env,
    TMPDIR: "/tmp",
    ...(proxied ? proxyEnvironment() : {}),
  });
}

/**
 * The runner's own environment: a command's, without what would change how the runner's node
 * or perl starts. `NODE_OPTIONS` may `--require` a file the sandbox hides (under the host's
 * /tmp, say), `PERL5OPT` load a module, and then no command could run at all; each command
 * still gets them (they are in the request).
 */
export function runnerEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const runner = { ...env };
  delete runner.NODE_OPTIONS;
  for (const name of Object.keys(runner)) if (name.startsWith("PERL")) delete runner[name];
  return runner;
}
