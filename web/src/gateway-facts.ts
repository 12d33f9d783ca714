/**
 * The header's facts of the gateway: its version and engine (`GET /api/health`, free of a
 * token), the demo banner, and where and how its agents work (`GET /api/info`, token needed).
 */
import type { ApiClient } from "./api.js";
import { byTestId } from "./dom.js";
import type { AgentInfo, Health } from "./types.js";

export async function showHealth(api: ApiClient): Promise<void> {
  const health = byTestId("health");
  const result = await api.get<Health>("/api/health");
  if (!result.ok) {
    health.textContent = `gateway unreachable: ${result.error}`;
    return;
  }
  const { version, engine, demo, hint } = result.value;
  health.textContent = `v${version} \u00b7 engine ${engine}`;
  const banner = byTestId("demo-banner");
  banner.hidden = !demo;
  if (demo) {
    banner.textContent = `Demo model: replies are scripted. ${hint ?? ""}`.trim();
  }
}

/** The folder, engine, model and sandbox of the agents, beside the version (token needed). */
export async function showAgentInfo(api: ApiClient): Promise<void> {
  const result = await api.get<AgentInfo>("/api/info");
  if (!result.ok) return;
  const { cwd, engine, model, sandbox } = result.value;
  const info = byTestId("agent-info");
  info.textContent = `${cwd} \u00b7 ${engine} \u00b7 ${model} \u00b7 sandbox ${sandbox ? "on" : "off"}`;
  info.title = `Agents work in ${cwd} with the ${engine} engine, model ${model}, sandbox ${sandbox ? "on" : "off"}`;
}
