// A gateway in its own process, for the SIGKILL-restart test: started with
// `node --import tsx test/gateway/gateway-child.ts <dataDir> <scenarioFile> <fakeLog>`,
// it prints one JSON line `{url, token}` once listening and runs until SIGTERM.
import { startGateway } from "../../src/gateway/index.js";
import { fakeClaudeSwitch } from "./helpers.js";

const [dataDir, scenarioFile, fakeLog] = process.argv.slice(2);
if (!dataDir || !scenarioFile || !fakeLog) {
  process.stderr.write("usage: gateway-child.ts <dataDir> <scenarioFile> <fakeLog>\n");
  process.exit(2);
}
const gateway = await startGateway({
  dataDir,
  port: 0,
  engine: {
    claudeBin: fakeClaudeSwitch,
    env: { GATEWAY_TEST_SCENARIO_FILE: scenarioFile, FAKE_CLAUDE_LOG: fakeLog },
  },
  logger: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify({ url: gateway.url, token: gateway.token })}\n`);
process.once("SIGTERM", () => {
  void gateway.close().then(() => process.exit(0));
});
