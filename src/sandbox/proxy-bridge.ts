/** The port inside the sandbox's own network namespace where the bridge listens. */
export const BRIDGE_PORT = 3128;

/**
 * The bridge inside the sandbox, run by node as `node -e BRIDGE socket port
 * command`: it listens on 127.0.0.1:port in the sandbox's (otherwise empty)
 * network namespace, passes each connection to rudder's proxy over the unix
 * socket, and once listening runs `bash -c command`, exiting with its status.
 * It dies with the sandbox, like everything in its PID namespace.
 */
export const BRIDGE_SCRIPT = [
  'const net = require("node:net");',
  'const { spawn } = require("node:child_process");',
  "const [socketPath, port, command] = process.argv.slice(1);",
  "const server = net.createServer((client) => {",
  "  const upstream = net.connect(socketPath);",
  "  client.on('error', () => upstream.destroy());",
  "  upstream.on('error', () => client.destroy());",
  "  client.pipe(upstream).pipe(client);",
  "});",
  "server.listen(Number(port), '127.0.0.1', () => {",
  "  const child = spawn('bash', ['-c', command], { stdio: 'inherit' });",
  "  child.on('error', (error) => { console.error(error.message); process.exit(127); });",
  "  child.on('exit', (code, signal) => process.exit(code ?? 128));",
  "});",
].join("\n");

/** The variables that send HTTP clients inside through the bridge. */
export function proxyEnvironment(): Record<string, string> {
  const address = `http://127.0.0.1:${BRIDGE_PORT}`;
  return {
    HTTP_PROXY: address,
    HTTPS_PROXY: address,
    http_proxy: address,
    https_proxy: address,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
}
