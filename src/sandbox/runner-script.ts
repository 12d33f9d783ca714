/**
 * The runner inside a session's sandbox, run by node as `node -e RUNNER
 * graceMs [socket port]`. It reads one JSON request a line on stdin and
 * answers one JSON event a line on stdout:
 * - `{type:"run", id, command, cwd, env}` starts `bash -c command` in its
 *   own process group; `{type:"data", id, stream, length}` followed by that
 *   many raw bytes of its stdout (1) or stderr (2), in arrival order, `{type:"exit", id, code, signal}`, then
 *   `{type:"close", id}` follow (`{type:"error", id, message}` when it could
 *   not start, then `close`).
 * - `{type:"terminate", id}` kills that command's group: SIGTERM, then
 *   SIGKILL after the grace period. The same happens by itself once the
 *   shell has exited, so nothing a command left in the background lives on.
 * When stdin ends (rudder closed the sandbox, or died), it SIGKILLs every
 * process in the sandbox's PID namespace and exits; bubblewrap's
 * die-with-parent does the same should the runner itself be gone.
 * With a socket, it first listens on 127.0.0.1:port in the sandbox's own
 * (otherwise empty) network namespace and passes each connection to
 * rudder's domain proxy over that unix socket.
 */
export const RUNNER_SCRIPT = [
  'const net = require("node:net");',
  'const { spawn } = require("node:child_process");',
  "const [grace, socketPath, port] = process.argv.slice(1);",
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
  "function end() {",
  "  try { process.kill(-1, 'SIGKILL'); } catch {}",
  "  process.exit(0);",
  "}",
  "function serve() {",
  "  let partial = '';",
  "  process.stdin.setEncoding('utf8');",
  "  process.stdin.on('data', (chunk) => {",
  "    const lines = (partial + chunk).split('\\n');",
  "    partial = lines.pop();",
  "    for (const line of lines) {",
  "      if (line === '') continue;",
  "      const request = JSON.parse(line);",
  "      if (request.type === 'run') run(request);",
  "      else if (request.type === 'terminate') terminate(request.id);",
  "    }",
  "  });",
  "  process.stdin.on('end', end);",
  "  process.stdin.on('error', end);",
  "}",
  "if (socketPath === undefined) serve();",
  "else {",
  "  const server = net.createServer((client) => {",
  "    const upstream = net.connect(socketPath);",
  "    client.on('error', () => upstream.destroy());",
  "    upstream.on('error', () => client.destroy());",
  "    client.pipe(upstream).pipe(client);",
  "  });",
  "  server.listen(Number(port), '127.0.0.1', serve);",
  "}",
].join("\n");
