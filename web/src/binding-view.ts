/**
 * Bindings on the page: the header's facts for the open channel (its binding, folder, engine,
 * model, sandbox: `GET /api/channels/:id/info`), and the new-channel form's choice of binding,
 * which names the channel by the binding's first pattern the page can open (its `*` replaced by
 * the name typed), so a channel is opened on a binding, never on a path.
 */
import type { ApiClient } from "./api.js";
import { byTestId, h } from "./dom.js";

interface ChannelInfo {
  binding: string;
  cwd: string;
  engine: string;
  model: string;
  sandbox: boolean;
}

interface BindingSummary {
  name: string;
  match: string[];
}

/** Chat platforms' channels: opened by their sources, not by the page. */
const CHAT_PLATFORMS = /^(telegram|slack|discord):/;

/**
 * The header shows what the open channel's agents are when a binding of the configuration
 * file holds it; for the others it shows the gateway's defaults (`showDefaults`, from
 * `GET /api/info`). `current` says whether the channel is still the open one.
 */
export async function showChannelInfo(
  api: ApiClient,
  channelId: string,
  current: () => boolean,
  showDefaults: () => Promise<void>,
): Promise<void> {
  const result = await api.get<ChannelInfo>(`/api/channels/${encodeURIComponent(channelId)}/info`);
  if (!current()) return;
  if (!result.ok || result.value.binding === "defaults") return showDefaults();
  const { binding, cwd, engine, model, sandbox } = result.value;
  const info = byTestId("agent-info");
  const on = sandbox ? "on" : "off";
  info.textContent = `${binding} \u00b7 ${cwd} \u00b7 ${engine} \u00b7 ${model} \u00b7 sandbox ${on}`;
  info.title = `Binding ${binding}: agents work in ${cwd} with the ${engine} engine, model ${model}, sandbox ${on}`;
}

/** The pattern of a binding the page opens channels on, if it has one. */
function pagePattern(binding: BindingSummary): string | undefined {
  return binding.match.find((pattern) => !CHAT_PLATFORMS.test(pattern));
}

/**
 * Fills the new-channel form's binding choice (shown only when the configuration has bindings
 * the page can open) and returns how a typed name becomes a channel id.
 */
export async function bindingChoice(api: ApiClient): Promise<(name: string) => string> {
  const select = byTestId<HTMLSelectElement>("new-channel-binding");
  const result = await api.get<{ bindings: BindingSummary[] }>("/api/bindings");
  const patterns = new Map<string, string>();
  if (result.ok) {
    for (const binding of result.value.bindings) {
      const pattern = pagePattern(binding);
      if (pattern !== undefined) patterns.set(binding.name, pattern);
    }
  }
  select.replaceChildren(
    h("option", { value: "" }, "defaults"),
    ...[...patterns].map(([name, pattern]) => h("option", { value: name }, `${name} (${pattern})`)),
  );
  select.hidden = patterns.size === 0;
  return (name) => {
    const pattern = patterns.get(select.value);
    if (pattern === undefined) return name;
    return pattern.includes("*") ? pattern.replace("*", name).replaceAll("*", "") : pattern;
  };
}
