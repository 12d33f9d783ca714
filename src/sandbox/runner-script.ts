/**
 * The runner inside a session's sandbox where perl is missing, run by node as
 * `node -e RUNNER graceMs - 0 [bridge port]` (`PERL_RUNNER_SCRIPT` is the same
 * runner in perl, which starts far sooner). The protocol, the same for both:
 * `{type:"ready", id: 0}` once it takes requests (the sandbox is up); then
 * requests on stdin, each a header line and, for `run`, a payload:
 * - `run ID LENGTH\n` and LENGTH bytes of `cwd\0command\0NAME=value\0...`
 *   (none of which can hold a NUL) starts `bash -c command` in its own
 *   process group with that cwd and exactly that environment;
 *   `{type:"data", id, stream, length}` followed by that many raw bytes of
 *   its stdout (1) or stderr (2), in arrival order, `{type:"exit", id, code,
 *   signal}` (a signal by name or number), then `{type:"close", id}` follow,
 *   one JSON event a line on stdout (`{type:"error", id, message}` when it
 *   could not start, then `close`).
 * - `terminate ID\n` kills that command's group: SIGTERM, then SIGKILL after
 *   the grace period. The same happens by itself once the shell has exited,
 *   so nothing a command left in the background lives on.
 * When stdin ends (rudder closed the sandbox, or died), it exits: it is the
 * sandbox's first process, so bubblewrap's init then exits too, and the
 * kernel kills every process left in the sandbox's PID namespace (it kills
 * nothing itself, so a runner started outside a sandbox by hand is harmless).
 * bubblewrap's die-with-parent does the same should the runner be gone.
 * With `bridge port`, it first listens on 127.0.0.1:port in the sandbox's own
 * (otherwise empty) network namespace and passes each connection to
 * rudder's domain proxy: it sends `{type:"bridge"}` on its IPC channel (node's,
 * whose descriptor rudder hands in) and pairs the connection with the next
 * socket rudder sends back there, already connected to the proxy (none: the
 * proxy could not be reached, and the connection is closed). It never makes
 * a socket of its own: the whole sandbox runs under the unix-socket filter
 * (unix-socket-filter.ts), which this runner, unlike perl's, cannot install
 * on its commands alone.
 */
export const NODE_RUNNER_SCRIPT = [
  'const net = require("node:net");',
  'const { spawn } = require("node:child_process");',
  "const [grace, , , bridge, port] = process.argv.slice(1);",
  "const groups = new Map();",
  "const send = (event) => process.stdout.write(JSON.stringify(event) + '\\n');",
  "const signal = (pid, name) => { try { process.kill(-pid, name); } catch {} };",
  "function terminate(id) {",
  "  const pid = groups.get(id);",
  "  if (pid === undefined) return;",
  "  groups.delete(id);",
  "  signal(pid, 'SIGTERM');",
  "  setTimeout(() => signal(pid, 'SIGKILL'), Number(grace));",
  "}",
  "function run({ id, command, cwd, env }) {",
  "  let child;",
  "  try {",
  "    child = spawn('bash', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });",
  "  } catch (error) {",
  "    send({ type: 'error', id, message: error.message });",
  "    send({ type: 'close', id });",
  "    return;",
  "  }",
  "  if (child.pid !== undefined) groups.set(id, child.pid);",
  "  const data = (stream) => (chunk) => {",
  "    send({ type: 'data', id, stream, length: chunk.length });",
  "    process.stdout.write(chunk);",
  "  };",
  "  child.stdout.on('data', data(1));",
  "  child.stderr.on('data', data(2));",
  "  child.on('error', (error) => send({ type: 'error', id, message: error.message }));",
  "  child.on('exit', (code, signal) => { send({ type: 'exit', id, code, signal }); terminate(id); });",
  "  child.on('close', () => send({ type: 'close', id }));",
  "}",
  "const end = () => process.exit(0);",
  "function serve() {",
  "  send({ type: 'ready', id: 0 });",
  "  let pending = Buffer.alloc(0);",
  "  process.stdin.on('data', (chunk) => {",
  "    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);",
  "    for (;;) {",
  "      const newline = pending.indexOf(10);",
  "      if (newline === -1) return;",
  "      const [type, id, length] = pending.subarray(0, newline).toString('latin1').split(' ');",
  "      const start = newline + 1;",
  "      if (type === 'run') {",
  "        if (pending.length < start + Number(length)) return;",
  "        const payload = pending.subarray(start, start + Number(length)).toString('utf8');",
  "        pending = pending.subarray(start + Number(length));",
  "        const [cwd, command, ...pairs] = payload.split('\\0');",
  "        const env = {};",
  "        for (const pair of pairs) {",
  "          const at = pair.indexOf('=');",
  "          if (at > -1) env[pair.slice(0, at)] = pair.slice(at + 1);",
  "        }",
  "        run({ id: Number(id), command, cwd, env });",
  "      } else {",
  "        pending = pending.subarray(start);",
  "        if (type === 'terminate') terminate(Number(id));",
  "      }",
  "    }",
  "  });",
  "  process.stdin.on('end', end);",
  "  process.stdin.on('error', end);",
  "}",
  "if (bridge === undefined) serve();",
  "else {",
  "  const waiting = [];",
  "  process.on('message', (message, upstream) => {",
  "    const client = waiting.shift();",
  "    if (upstream === undefined) return client?.destroy();",
  "    if (client === undefined || client.destroyed) return upstream.destroy();",
  "    client.on('error', () => upstream.destroy());",
  "    upstream.on('error', () => client.destroy());",
  "    client.pipe(upstream).pipe(client);",
  "  });",
  "  const server = net.createServer((client) => {",
  "    waiting.push(client);",
  "    process.send({ type: 'bridge' });",
  "  });",
  "  server.listen(Number(port), '127.0.0.1', serve);",
  "}",
].join("\n");
