import { proxyEnvironment } from "./proxy-bridge.js";

/** The environment variables a command inside never gets: the gateway's credentials. */
const UNSET_VARIABLES = ["RUDDER_TOKEN"];

/** A command's environment inside: rudder's, without the gateway's credentials, TMPDIR the private /tmp. */
export function commandEnvironment(env: NodeJS.ProcessEnv, proxied: boolean): NodeJS.ProcessEnv {
  const inside: NodeJS.ProcessEnv = {
    ...env,
    TMPDIR: "/tmp",
    ...(proxied ? proxyEnvironment() : {}),
  };
  for (const name of UNSET_VARIABLES) delete inside[name];
  return inside;
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
